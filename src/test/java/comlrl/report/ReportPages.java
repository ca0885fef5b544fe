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

    /** One {@code <tr class="value">}: a series shown as a value ({@code text}: "0.5", "0.3 \u2192 0.8"). */
    public record Value(String run, String metric, int dataPoints, String text) {
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

    public static List<Value> values(Document page) {
        List<Value> out = new ArrayList<>();
        NodeList rows = page.getElementsByTagName("tr");
        for (int i = 0; i < rows.getLength(); i++) {
            Element e = (Element) rows.item(i);
            if (!e.getAttribute("class").equals("value")) {
                continue;
            }
            NodeList cells = e.getElementsByTagName("td");
            String text = "";
            for (int c = 0; c < cells.getLength(); c++) {
                Element cell = (Element) cells.item(c);
                if (cell.getAttribute("class").contains("value")) {
                    text = cell.getTextContent();
                }
            }
            out.add(new Value(e.getAttribute("data-run"), e.getAttribute("data-metric"),
                    Integer.parseInt(e.getAttribute("data-points")), text));
        }
        return out;
    }

    /** run + " \u00b7 " + metric -> data-points, of every curve and every value row (each shown once). */
    public static Map<String, Integer> shown(Document page) {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (Curve c : curves(page)) {
            if (out.put(c.run() + " \u00b7 " + c.metric(), c.dataPoints()) != null) {
                throw new AssertionError("shown twice: " + c.metric());
            }
        }
        for (Value v : values(page)) {
            if (out.put(v.run() + " \u00b7 " + v.metric(), v.dataPoints()) != null) {
                throw new AssertionError("shown twice: " + v.metric());
            }
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
