package comlrl.trainers.preference;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A generic-format comparator service on the loopback interface for tests: every request gets the
 * same completions; each request body is recorded with its Authorization header.
 */
public final class LocalComparatorServer implements AutoCloseable {
    private final HttpServer server;
    private final List<String> requests = Collections.synchronizedList(new ArrayList<>());

    /** Answers {@code {"completions": completions}} at {@code /generate}. */
    public LocalComparatorServer(List<String> completions) {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        StringBuilder json = new StringBuilder("{\"completions\": [");
        for (int i = 0; i < completions.size(); i++) {
            json.append(i == 0 ? "" : ", ").append('"').append(completions.get(i)).append('"');
        }
        byte[] reply = json.append("]}").toString().getBytes(StandardCharsets.UTF_8);
        server.createContext("/generate", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            requests.add(body + " auth=" + exchange.getRequestHeaders().getFirst("Authorization"));
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
