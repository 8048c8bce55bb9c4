/*
 * Runs several invocations of Kafka's command-line tools in one JVM, each exactly as its bin/
 * script runs it: the tool's own main class with the operator's arguments; only the JVM start-up
 * (1-2 s of CPU each on two cores) is shared. Used for the tools that read or write files only
 * (kafka-storage format, kafka-dump-log, kafka-metadata-shell), never for a tool that talks to a
 * cluster.
 *
 *   java -cp KAFKA_CLASSPATH kafka/ToolBatch.java BATCH_FILE OUT_DIR
 *
 * BATCH_FILE has one invocation per line: the main class, then its arguments, tab-separated.
 * For invocation N (from 0) OUT_DIR receives N.stdout, N.stderr and N.exit (the status the tool
 * passed to Kafka's Exit.exit, or 0 when main returned). Exit.exit and Exit.halt are intercepted
 * (Kafka's Exit class, org.apache.kafka.common.utils[.internals].Exit, is how Kafka's tools end the process), so one invocation
 * cannot end the batch; shutdown hooks a tool registers run when the batch JVM ends.
 */

import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

public class ToolBatch {
    /** Thrown in place of ending the JVM; carries the tool's exit status. */
    static final class ToolExit extends RuntimeException {
        final int status;

        ToolExit(int status) {
            super(null, null, false, false);
            this.status = status;
        }
    }

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        Path out = Path.of(args[1]);
        Files.createDirectories(out);
        // 4.4.0 moved the class to an internals package (4.3.1: org.apache.kafka.common.utils.Exit).
        String exitClass;
        try {
            Class.forName("org.apache.kafka.common.utils.internals.Exit");
            exitClass = "org.apache.kafka.common.utils.internals.Exit";
        } catch (ClassNotFoundException e) {
            exitClass = "org.apache.kafka.common.utils.Exit";
        }
        Class<?> exit = Class.forName(exitClass);
        Class<?> procedure = Class.forName(exitClass + "$Procedure");
        Object thrower = java.lang.reflect.Proxy.newProxyInstance(procedure.getClassLoader(), new Class<?>[] {procedure},
            (proxy, method, methodArgs) -> {
                if (method.getName().equals("execute")) {
                    throw new ToolExit((Integer) methodArgs[0]);
                }
                return method.invoke(proxy, methodArgs);
            });
        exit.getMethod("setExitProcedure", procedure).invoke(null, thrower);
        exit.getMethod("setHaltProcedure", procedure).invoke(null, thrower);
        PrintStream realOut = System.out;
        PrintStream realErr = System.err;
        int index = 0;
        for (String line : lines) {
            if (line.isEmpty()) {
                continue;
            }
            String[] fields = line.split("\t", -1);
            String[] toolArgs = Arrays.copyOfRange(fields, 1, fields.length);
            int status = 0;
            try (PrintStream stdout = new PrintStream(new FileOutputStream(out.resolve(index + ".stdout").toFile()), true, StandardCharsets.UTF_8);
                 PrintStream stderr = new PrintStream(new FileOutputStream(out.resolve(index + ".stderr").toFile()), true, StandardCharsets.UTF_8)) {
                System.setOut(stdout);
                System.setErr(stderr);
                try {
                    Class.forName(fields[0]).getMethod("main", String[].class).invoke(null, (Object) toolArgs);
                } catch (InvocationTargetException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof ToolExit) {
                        status = ((ToolExit) cause).status;
                    } else {
                        // What the JVM prints for an uncaught exception from main, and its status.
                        stderr.print("Exception in thread \"main\" ");
                        cause.printStackTrace(stderr);
                        status = 1;
                    }
                } finally {
                    System.out.flush();
                    System.err.flush();
                    System.setOut(realOut);
                    System.setErr(realErr);
                }
            }
            Files.writeString(out.resolve(index + ".exit"), Integer.toString(status));
            index++;
        }
    }
}
