package custodia.harness;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Result;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;

/**
 * A private Neo4j Community for Custodia's tests: in-process, Bolt only on 127.0.0.1, HTTP off,
 * auth on with the password from NEO4J_LAUNCHER_PASSWORD (user neo4j, at least 8 characters).
 *
 * <p>Prints {@code custodia-neo4j ready URI version=V edition=E start_ms=N jvm_ms=M} once it
 * answers on Bolt and {@code custodia-neo4j stopped stop_ms=N} once closed. It stops cleanly when
 * its standard input ends (the harness holds a pipe, so a dead harness stops it too) or on
 * SIGTERM.
 *
 * <p>Usage: {@code Neo4jLauncher --port P --dir DIR [--pagecache-mb N]}.
 */
public final class Neo4jLauncher {
  private static final Duration SHORT = Duration.ofMillis(500);

  private Neo4jLauncher() {}

  public static void main(String[] args) throws Exception {
    int port = -1;
    Path dir = null;
    long pagecacheMb = 32;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String value = i + 1 < args.length ? args[i + 1] : null;
      if (value == null) {
        fail("missing value after " + arg);
      }
      switch (arg) {
        case "--port" -> port = Integer.parseInt(value);
        case "--dir" -> dir = Path.of(value);
        case "--pagecache-mb" -> pagecacheMb = Long.parseLong(value);
        default -> fail("unknown argument " + arg);
      }
      i++;
    }
    if (port < 0 || port > 65535 || dir == null) {
      fail("usage: Neo4jLauncher --port P --dir DIR [--pagecache-mb N]");
    }
    String password = System.getenv("NEO4J_LAUNCHER_PASSWORD");
    if (password == null || password.length() < 8) {
      fail("NEO4J_LAUNCHER_PASSWORD must be set to at least 8 characters");
    }
    Files.createDirectories(dir);

    long started = System.nanoTime();
    Neo4j neo4j =
        Neo4jBuilders.newInProcessBuilder(dir)
            .withDisabledServer() // no HTTP/HTTPS: Bolt only
            .withConfig(HttpConnector.enabled, false)
            .withConfig(HttpsConnector.enabled, false)
            .withConfig(BoltConnector.enabled, true)
            .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
            .withConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
            .withConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
            .withConfig(GraphDatabaseSettings.auth_enabled, true)
            .withConfig(GraphDatabaseSettings.pagecache_memory, pagecacheMb * 1024 * 1024)
            // no usage data sent anywhere: the tests never leave loopback
            .withConfig(GraphDatabaseSettings.udc_enabled, false)
            .withConfig(GraphDatabaseInternalSettings.udc_network_enabled, false)
            // a test server stops in about a second, not after netty's 2 x 5 s grace periods
            .withConfig(BoltConnectorInternalSettings.enable_local_connector, false)
            .withConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, SHORT)
            .withConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, SHORT)
            .withConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
            .withConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, SHORT)
            .build();
    AtomicBoolean closed = new AtomicBoolean();
    Runnable stop =
        () -> {
          if (closed.compareAndSet(false, true)) {
            long stopping = System.nanoTime();
            neo4j.close();
            System.out.printf(
                "custodia-neo4j stopped stop_ms=%d%n", (System.nanoTime() - stopping) / 1_000_000);
            System.out.flush();
          }
        };
    Runtime.getRuntime().addShutdownHook(new Thread(stop, "custodia-neo4j-stop"));

    GraphDatabaseService system = neo4j.databaseManagementService().database("system");
    system.executeTransactionally(
        "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
    String[] component =
        neo4j
            .defaultDatabaseService()
            .executeTransactionally(
                "CALL dbms.components() YIELD versions, edition "
                    + "RETURN versions[0] AS version, edition",
                Map.of(),
                (Result result) -> {
                  Map<String, Object> row = result.next();
                  return new String[] {
                    String.valueOf(row.get("version")), String.valueOf(row.get("edition"))
                  };
                });
    long startMs = (System.nanoTime() - started) / 1_000_000;
    long jvmMs =
        System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime();
    System.out.printf(
        "custodia-neo4j ready %s version=%s edition=%s start_ms=%d jvm_ms=%d%n",
        neo4j.boltURI(), component[0], component[1], startMs, jvmMs);
    System.out.flush();

    InputStream in = System.in;
    byte[] buffer = new byte[256];
    try {
      while (in.read(buffer) >= 0) {
        // anything written is ignored: only the end of input matters
      }
    } catch (IOException e) {
      // a broken pipe is an end of input too
    }
    stop.run();
    System.exit(0);
  }

  private static void fail(String message) {
    System.err.println("custodia-neo4j: " + message);
    System.exit(2);
  }
}
