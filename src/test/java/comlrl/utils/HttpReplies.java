package comlrl.utils;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;

/** Replies of the local HTTP servers that tests stand up in place of a hub or a service. */
public final class HttpReplies {
    private HttpReplies() {}

    /** Sends {@code status}, {@code headers} and {@code body} (none when empty). */
    public static void send(HttpExchange exchange, int status, Map<String, String> headers, byte[] body)
            throws IOException {
        headers.forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
