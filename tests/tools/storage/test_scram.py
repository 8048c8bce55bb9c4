"""`format --add-scram`: Kafka's ScramParser messages and RFC 5802 credentials."""

from __future__ import annotations

import base64
import hashlib
import hmac
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kjbod.tools.storage.scram import ScramError, java_bytes_text, parse_scram_argument, record_text

# RFC 7677 section 3's exchange (SCRAM-SHA-256, user "user", password "pencil").
RFC_SALT = "W22ZaJ0SNY7soEsUEjb6gQ=="
RFC_AUTH_MESSAGE = (
    b"n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,"
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
)
RFC_CLIENT_PROOF = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
RFC_SERVER_SIGNATURE = "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_the_credential_is_rfc_7677s() -> None:
    """The server signature of the RFC's exchange comes from the record's ServerKey, and its client
    proof, undone with the StoredKey's signature, hashes to the StoredKey."""
    record = parse_scram_argument(f"SCRAM-SHA-256=[name=user,password=pencil,salt=\"{RFC_SALT}\"]")
    assert (record.name, record.mechanism, record.iterations, record.salt) == ("user", 1, 4096, base64.b64decode(RFC_SALT))
    assert base64.b64encode(hmac.digest(record.server_key, RFC_AUTH_MESSAGE, "sha256")).decode() == RFC_SERVER_SIGNATURE
    client_signature = hmac.digest(record.stored_key, RFC_AUTH_MESSAGE, "sha256")
    client_key = bytes(a ^ b for a, b in zip(base64.b64decode(RFC_CLIENT_PROOF), client_signature))
    assert hashlib.sha256(client_key).digest() == record.stored_key


def test_a_salted_password_and_sha_512() -> None:
    record = parse_scram_argument(' SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="] ')
    assert (record.mechanism, record.iterations, record.salt) == (2, 8192, b"7q")
    assert record.server_key == hmac.digest(b"`!", b"Server Key", "sha512")
    assert record.stored_key == hashlib.sha512(hmac.digest(b"`!", b"Client Key", "sha512")).digest()


def test_without_a_salt_kafkas_random_base36_text_is_the_salt() -> None:
    """ScramFormatter.secureRandomBytes: `new BigInteger(130, random).toString(36)` as UTF-8."""
    record = parse_scram_argument("SCRAM-SHA-256=[name=bob,password=x]", random.Random(7))
    assert 20 <= len(record.salt) <= 26 and set(record.salt.decode()) <= set("0123456789abcdefghijklmnopqrstuvwxyz")
    assert record.salt == parse_scram_argument("SCRAM-SHA-256=[name=bob,password=x]", random.Random(7)).salt


def test_the_bootstrap_line_prints_javas_signed_bytes() -> None:
    record = parse_scram_argument('SCRAM-SHA-256=[name=alice,salt="gP8=",saltedpassword="YCE="]')
    assert java_bytes_text(b"\x80\xff\x01") == "[-128, -1, 1]"
    assert record_text(record).startswith("UserScramCredentialRecord(name='alice', mechanism=1, salt=[-128, -1], storedKey=[")
    assert record_text(record).endswith("], iterations=4096)")


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("SCRAM-SHA-256", "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256'"),
        ("SCRAM-SHA-1=[name=a,password=b]", "The add-scram mechanism SCRAM-SHA-1 is not supported."),
        ("SCRAM-SHA-256=name=a]", "Expected configuration string to start with ["),
        ("SCRAM-SHA-256=[name=a", "Expected configuration string to end with ]"),
        ("SCRAM-SHA-256=[name=a,password]", "No equals sign found in SCRAM component: password"),
        ("SCRAM-SHA-256=[]", "No equals sign found in SCRAM component: "),
        ("SCRAM-SHA-256=[password=b]", "You must supply 'name' to add-scram"),
        ("SCRAM-SHA-256=[name=a,password=b,salt=%%]", "Failed to decode given salt: %%"),
        ("SCRAM-SHA-256=[name=a,password=b,iterations=4k]", "Failed to parse iterations count: 4k"),
        ("SCRAM-SHA-256=[name=a]", "You must supply one of 'password' or 'saltedpassword' to add-scram"),
        ("SCRAM-SHA-256=[name=a,saltedpassword=YCE=]", "You must supply 'salt' with 'saltedpassword' to add-scram"),
        ("SCRAM-SHA-256=[name=a,salt=N3E=,saltedpassword=?]", "Failed to decode given saltedPassword: ?"),
        ("SCRAM-SHA-256=[name=a,password=b,zeta=1,alpha=2]", "Unknown SCRAM configurations: alpha, zeta"),
        ("SCRAM-SHA-256=[name=a,password=b,iterations=4095]", "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256"),
        ("SCRAM-SHA-512=[name=a,password=b,iterations=16385]", "The 'iterations' value must be <= 16384 for add-scram using SCRAM_SHA_512"),
        # Java's SecretKeySpec refuses an empty key: kafka-storage's uncaught IllegalArgumentException
        # (ScramFormatter.hi :76 / .hmac :58; run with 4.3.1 and 4.4.0: exit 1, nothing written).
        ("SCRAM-SHA-256=[name=bob,password=]", "Empty key: the SCRAM-SHA-256 credential of bob has an empty password (Kafka's "
         "kafka-storage fails with java.lang.IllegalArgumentException: Empty key); give it a non-empty one"),
        ('SCRAM-SHA-512=[name=bob,password=""]', "Empty key: the SCRAM-SHA-512 credential of bob has an empty password (Kafka's "
         "kafka-storage fails with java.lang.IllegalArgumentException: Empty key); give it a non-empty one"),
        ("SCRAM-SHA-256=[name=bob,salt=c2FsdA==,saltedpassword=]", "Empty key: the SCRAM-SHA-256 credential of bob has an empty "
         "saltedpassword (Kafka's kafka-storage fails with java.lang.IllegalArgumentException: Empty key); give it a non-empty one"),
    ],
)
def test_kafkas_refusals(argument: str, message: str) -> None:
    with pytest.raises(ScramError) as raised:
        parse_scram_argument(argument)
    assert raised.value.message == message


@given(st.text(max_size=40))
def test_any_argument_is_a_record_or_one_of_kafkas_refusals(argument: str) -> None:
    try:
        record = parse_scram_argument(argument)
    except ScramError as exc:
        assert "\n" not in exc.message.strip() or "\n" in argument
    else:
        assert record.mechanism in (1, 2)
