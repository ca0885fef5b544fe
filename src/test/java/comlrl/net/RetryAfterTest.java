package comlrl.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Retry-After in each form RFC 9110 allows, against a fixed "now". */
class RetryAfterTest {
    private static final Instant NOW = Instant.parse("2015-10-21T07:28:00Z");

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "120                            | 120",
            "' 0 '                          | 0",
            "Wed, 21 Oct 2015 07:28:30 GMT  | 30",    // IMF-fixdate
            "Wednesday, 21-Oct-15 07:29:00 GMT | 60", // RFC 850
            "Wed Oct 21 07:28:10 2015       | 10",    // asctime
            "Wed, 21 Oct 2015 07:00:00 GMT  | 0"})    // in the past: no wait
    void readsSecondsAndEveryDateForm(String header, long seconds) {
        assertThat(RetryAfter.parse(header, NOW)).contains(Duration.ofSeconds(seconds));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "soon", "-5", "1.5", "Wed, 32 Oct 2015 07:28:30 GMT"})
    void anythingElseIsNoAnswer(String header) {
        assertThat(RetryAfter.parse(header, NOW)).isEmpty();
        assertThat(RetryAfter.parse(null, NOW)).isEmpty();
    }
}
