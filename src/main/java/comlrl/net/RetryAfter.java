package comlrl.net;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The {@code Retry-After} header of a 429 or 503 answer (RFC 9110 §10.2.3): a number of seconds
 * ({@code 120}) or an HTTP date ({@code Wed, 21 Oct 2015 07:28:00 GMT}, or the two obsolete date
 * forms every recipient must accept), read as the wait from {@code now}. A date in the past is no
 * wait; anything else is no answer, so the caller falls back to its own backoff.
 */
public final class RetryAfter {
    private static final List<DateTimeFormatter> DATES = List.of(
            DateTimeFormatter.RFC_1123_DATE_TIME,                                            // IMF-fixdate
            DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss zzz", Locale.US),          // RFC 850
            DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(java.time.ZoneOffset.UTC)); // asctime

    private RetryAfter() {}

    /**
     * The wait {@code value} asks for, counted from {@code now}; empty when {@code value} is null
     * or neither form.
     */
    public static Optional<Duration> parse(String value, Instant now) {
        if (value == null || value.isBlank()) {
            return Optional.empty();
        }
        String v = value.trim();
        if (v.matches("\\d{1,12}")) {
            return Optional.of(Duration.ofSeconds(Long.parseLong(v)));
        }
        for (DateTimeFormatter format : DATES) {
            try {
                Instant at = ZonedDateTime.parse(v, format).toInstant();
                Duration wait = Duration.between(now, at);
                return Optional.of(wait.isNegative() ? Duration.ZERO : wait);
            } catch (DateTimeParseException e) {
                // try the next form
            }
        }
        return Optional.empty();
    }
}
