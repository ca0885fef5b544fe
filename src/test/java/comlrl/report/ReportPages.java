package comlrl.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** Reading reports back for tests: the page as XML (it must be well-formed), its curves, and what a run logged. */
public final class ReportPages {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ReportPages() {
    }

    /** One {@code <polyline class="curve">}: its attributes, the coordinate pairs it draws, and its chart. */
    public record Curve(String run, String metric, int dataPoints, int coordinates, String stroke, Element figure) {
    }

    /** The report parsed as XML; fails on markup that is not well-formed. */
    public static Document parse(Path html) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        f.setExpandEntityReferences(false);
        return f.newDocumentBuilder().parse(html.toFile());
    }

    public static List<Curve> curves(Document page) {
        List<Curve> out = new ArrayList<>();
        NodeList lines = page.getElementsByTagName("polyline");
        for (int i = 0; i < lines.getLength(); i++) {
            Element e = (Element) lines.item(i);
            if (!e.getAttribute("class").equals("curve")) {
                continue;
            }
            String points = e.getAttribute("points").trim();
            Element figure = (Element) e.getParentNode().getParentNode();
            out.add(new Curve(e.getAttribute("data-run"), e.getAttribute("data-metric"),
                    Integer.parseInt(e.getAttribute("data-points")), points.isEmpty() ? 0 : points.split("\\s+").length,
                    e.getAttribute("stroke"), figure));
        }
        return out;
    }

    /** key -> the number of distinct env_steps at which {@code metrics.jsonl} logs a finite value of it. */
    public static Map<String, Integer> loggedSteps(Path metricsJsonl) throws IOException {
        Map<String, Set<Long>> steps = new LinkedHashMap<>();
        for (String line : Files.readAllLines(metricsJsonl)) {
            JsonNode event = JSON.readTree(line);
            long step = event.get("env_step").asLong();
            event.fields().forEachRemaining(field -> {
                if (!field.getKey().equals("env_step")) {
                    Set<Long> s = steps.computeIfAbsent(field.getKey(), k -> new HashSet<>());
                    if (field.getValue().isNumber()) {
                        s.add(step);
                    }
                }
            });
        }
        Map<String, Integer> out = new LinkedHashMap<>();
        steps.forEach((key, s) -> out.put(key, s.size()));
        return out;
    }
}
