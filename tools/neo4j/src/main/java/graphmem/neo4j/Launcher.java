package graphmem.neo4j;

import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.kernel.internal.Version;

/**
 * Neo4j Community with Bolt on 127.0.0.1, for graphmem's tests and development: the server's kernel, Cypher
 * runtime and indexes, without its packaging. Auth is on, as in production: the neo4j user's password is read
 * from a file. Memory is explicit (the page cache otherwise takes half of what the machine has left, and several
 * instances share one machine). Prints one line when Bolt answers; SIGTERM shuts the databases down cleanly.
 *
 * <p>Usage: {@code Launcher --home DIR --port N --password-file F --page-cache 128m --tx-memory 512m
 * [--setting name=value ...]} (the heap is the JVM's {@code -Xmx}).
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        Map<String, String> settings = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (args[i].equals("--setting")) {
                String[] pair = args[i + 1].split("=", 2);
                settings.put(pair[0], pair[1]);
            } else {
                options.put(args[i], args[i + 1]);
            }
        }
        String port = required(options, "--port");
        String password = Files.readString(Path.of(required(options, "--password-file"))).strip();
        settings.put("server.bolt.enabled", "true");
        settings.put("server.bolt.listen_address", "127.0.0.1:" + port);
        settings.put("server.bolt.advertised_address", "127.0.0.1:" + port);
        settings.put("server.memory.pagecache.size", required(options, "--page-cache"));
        settings.put("dbms.memory.transaction.total.max", required(options, "--tx-memory"));
        settings.put("dbms.security.auth_enabled", "true");

        // The builder takes typed settings or a file of named ones: the named ones go through a file in the home.
        Path home = Path.of(required(options, "--home"));
        Files.createDirectories(home);
        Path conf = home.resolve("graphmem-neo4j.conf");
        StringBuilder lines = new StringBuilder();
        settings.forEach((name, value) -> lines.append(name).append('=').append(value).append('\n'));
        Files.writeString(conf, lines);
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home).loadPropertiesFromFile(conf).build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dbms.shutdown();
            System.out.println("graphmem-neo4j: stopped");
            stopped.countDown();
        }));
        // The embedded API runs as the system itself, past auth: the one way to set the first password here.
        dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED", Map.of("password", password));
        dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        try (Socket probe = new Socket("127.0.0.1", Integer.parseInt(port))) {
            System.out.println("graphmem-neo4j: Neo4j " + Version.getNeo4jVersion() + " bolt ready on 127.0.0.1:"
                    + port);
        }
        stopped.await();
    }

    private static String required(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException("missing " + name);
        }
        return value;
    }
}
