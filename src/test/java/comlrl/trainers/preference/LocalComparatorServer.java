package comlrl.trainers.preference;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * A generic-format comparator service on the loopback interface for tests: every request gets the
 * same completions (or, {@link #echoing}, those with the request's credential headers written
 * into them); each request body is recorded with its Authorization header.
 */
public final class LocalComparatorServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final List<String> requests = Collections.synchronizedList(new ArrayList<>());

    /** Answers {@code {"completions": completions}} at {@code /generate}. */
    public LocalComparatorServer(List<String> completions) {
        this(completions, false);
    }

    /**
     * Answers each request with {@code completions}, each ending in the request's
     * {@code Authorization} and {@code x-api-key} headers: a careless service that echoes what it
     * was sent, key included.
     */
    public static LocalComparatorServer echoing(List<String> completions) {
        return new LocalComparatorServer(completions, true);
    }

    private LocalComparatorServer(List<String> completions, boolean echo) {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/generate", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String auth = exchange.getRequestHeaders().getFirst("Authorization");
            requests.add(body + " auth=" + auth);
            String echoed = " [Authorization: " + auth + ", x-api-key: "
                    + exchange.getRequestHeaders().getFirst("x-api-key") + "]";
            List<String> texts = echo ? completions.stream().map(c -> c + echoed).toList() : completions;
            byte[] reply = JSON.writeValueAsBytes(Map.of("completions", texts));
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, reply.length);
            exchange.getResponseBody().write(reply);
            exchange.close();
        });
        server.start();
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/generate";
    }

    /** The request bodies so far, each followed by " auth=<Authorization header>". */
    public List<String> requests() {
        return List.copyOf(requests);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
