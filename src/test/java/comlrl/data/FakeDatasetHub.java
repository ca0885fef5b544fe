package comlrl.data;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import comlrl.utils.HttpReplies;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A dataset hub on 127.0.0.1 in the Hugging Face layout: {@code GET /api/datasets/{id}/revision/{rev}}
 * answers {@code {"sha", "siblings": [{"rfilename"}]}}, {@code GET /datasets/{id}/resolve/{rev}/{path}}
 * the file with {@code X-Repo-Commit} and its SHA-256 as {@code ETag}. Revisions are branch names
 * (percent-decoded, so {@code refs%2Fconvert%2Fparquet} is {@code refs/convert/parquet}) or commits.
 */
final class FakeDatasetHub implements AutoCloseable {
    /** One revision of a repository: its commit and files. */
    record Revision(String commit, Map<String, byte[]> files) {}

    private final HttpServer server;
    private final Map<String, Map<String, Revision>> repos = new LinkedHashMap<>();
    private final List<String> requests = Collections.synchronizedList(new ArrayList<>());
    /** Released by {@link #close()}: what a stalling answer waits for. */
    private final CountDownLatch closing = new CountDownLatch(1);
    private volatile String stallOn;
    private final ExecutorService handlers = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "fake-dataset-hub");
        thread.setDaemon(true);
        return thread;
    });

    FakeDatasetHub() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::serve);
        server.setExecutor(handlers); // a stalled answer holds one thread, not the whole server
        server.start();
    }

    /** Adds (or replaces) {@code branch} of dataset {@code repoId} at {@code commit} holding {@code files}. */
    FakeDatasetHub put(String repoId, String branch, String commit, Map<String, byte[]> files) {
        repos.computeIfAbsent(repoId, r -> new LinkedHashMap<>()).put(branch, new Revision(commit, Map.copyOf(files)));
        return this;
    }

    /**
     * From now on, answers a request whose path contains {@code pathPart} with its headers and the
     * first 10 bytes of its body, then nothing until {@link #close()}.
     */
    FakeDatasetHub stallOn(String pathPart) {
        stallOn = pathPart;
        return this;
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The raw paths requested so far, in order. */
    List<String> requests() {
        synchronized (requests) {
            return List.copyOf(requests);
        }
    }

    /** The environment of a cache in {@code cacheDir} that downloads from this hub. */
    Map<String, String> env(java.nio.file.Path cacheDir, String... extra) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HF_HUB_CACHE", cacheDir.toString());
        env.put("HF_ENDPOINT", url());
        env.put("COMLRL_ALLOW_HTTP_ENDPOINT", "1"); // plain http, on 127.0.0.1 only
        for (int i = 0; i < extra.length; i += 2) {
            env.put(extra[i], extra[i + 1]);
        }
        return env;
    }

    @Override
    public void close() {
        closing.countDown();
        server.stop(0);
        handlers.shutdownNow();
    }

    static String sha256(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getRawPath();
            requests.add(path);
            if (stallOn != null && path.contains(stallOn)) {
                exchange.sendResponseHeaders(200, 1000);
                exchange.getResponseBody().write(new byte[10]);
                exchange.getResponseBody().flush();
                try {
                    closing.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            String[] parts = path.split("/", -1);
            boolean api = path.startsWith("/api/datasets/") && parts.length == 7 && parts[5].equals("revision");
            boolean resolve = path.startsWith("/datasets/") && parts.length >= 7 && parts[4].equals("resolve");
            if (!api && !resolve) {
                send(exchange, 400, Map.of(), "bad path " + path);
                return;
            }
            int idAt = api ? 3 : 2;
            Map<String, Revision> repo = repos.get(parts[idAt] + "/" + parts[idAt + 1]);
            if (repo == null) {
                send(exchange, 404, Map.of("X-Error-Code", "RepoNotFound"), "Repository not found");
                return;
            }
            String revisionName = URLDecoder.decode(parts[idAt + 3], StandardCharsets.UTF_8);
            Revision revision = repo.get(revisionName);
            if (revision == null) {
                revision = repo.values().stream().filter(r -> r.commit().equals(revisionName)).findFirst().orElse(null);
            }
            if (revision == null) {
                send(exchange, 404, Map.of("X-Error-Code", "RevisionNotFound"), "Invalid rev id: " + revisionName);
                return;
            }
            if (api) {
                List<Map<String, String>> siblings = revision.files().keySet().stream().sorted()
                        .map(f -> Map.of("rfilename", f)).toList();
                byte[] body = new ObjectMapper().writeValueAsBytes(Map.of("id", parts[3] + "/" + parts[4],
                        "sha", revision.commit(), "siblings", siblings));
                HttpReplies.send(exchange, 200, Map.of("Content-Type", "application/json"), body);
                return;
            }
            String file = URLDecoder.decode(String.join("/", List.of(parts).subList(idAt + 4, parts.length)),
                    StandardCharsets.UTF_8);
            byte[] content = revision.files().get(file);
            if (content == null) {
                send(exchange, 404, Map.of("X-Error-Code", "EntryNotFound", "X-Repo-Commit", revision.commit()),
                        "Entry not found");
                return;
            }
            HttpReplies.send(exchange, 200, Map.of("X-Repo-Commit", revision.commit(),
                    "ETag", "\"" + sha256(content) + "\""), content);
        }
    }

    private static void send(HttpExchange exchange, int status, Map<String, String> headers, String body)
            throws IOException {
        HttpReplies.send(exchange, status, headers, body.getBytes(StandardCharsets.UTF_8));
    }
}
