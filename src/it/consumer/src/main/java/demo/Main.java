package demo;
import java.nio.file.Path;
public class Main {
    public static void main(String[] args) {
        org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Main.class);
        log.info("application log line before training");
        System.out.println(LengthRatioExample.run("builtin:tiny", Path.of("/tmp/consumer/out"), 1, 4, 16));
        log.info("application log line after training");
    }
}
