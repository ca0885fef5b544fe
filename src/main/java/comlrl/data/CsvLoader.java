package comlrl.data;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@link Dataset#fromCsv} / {@link Dataset#fromTsv}: an RFC 4180 reader. Records end at CR, LF or
 * CRLF outside quotes (line breaks inside quotes are kept as written); a quoted field runs to the next lone quote, {@code ""} inside it being one
 * quote. Empty unquoted fields are null, empty quoted fields the empty string. Lines that are
 * entirely empty (after the header) are skipped, as pandas does.
 */
final class CsvLoader {
    private final Path file;
    private final Reader in;
    private final char separator;
    private long line = 1;
    private int pending = -2; // one character of look-ahead; -2 = none

    private CsvLoader(Path file, Reader in, char separator) {
        this.file = file;
        this.in = in;
        this.separator = separator;
    }

    static Dataset load(Path file, char separator) {
        Dataset.requireReadableFile(file);
        String format = separator == '\t' ? "TSV" : "CSV";
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            CsvLoader csv = new CsvLoader(file, reader, separator);
            csv.skipByteOrderMark();
            long headerLine = csv.line;
            List<Field> header = csv.readRecord();
            if (header == null) {
                throw DatasetException.inFile(file, "empty " + format + " file; the first line must be a header of "
                        + "column names, such as prompt" + separator + "target");
            }
            List<String> names = new ArrayList<>(header.size());
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < header.size(); i++) {
                String name = header.get(i).text;
                if (name.isEmpty()) {
                    throw DatasetException.atLine(file, headerLine, "header column " + (i + 1)
                            + " has no name; give every column a name in the first line");
                }
                if (!seen.add(name)) {
                    throw DatasetException.atLine(file, headerLine, "header names column '" + name
                            + "' twice; column names must be unique");
                }
                names.add(name);
            }
            List<Map<String, ?>> rows = new ArrayList<>();
            List<Long> lines = new ArrayList<>();
            while (true) {
                long recordLine = csv.line;
                List<Field> record = csv.readRecord();
                if (record == null) {
                    break;
                }
                if (record.size() == 1 && record.get(0).text.isEmpty() && !record.get(0).quoted) {
                    continue; // an empty line
                }
                if (record.size() != names.size()) {
                    throw DatasetException.atLine(file, recordLine, record.size() + " fields, but the header has "
                            + names.size() + " columns " + names + "; quote fields that contain the separator ('"
                            + (separator == '\t' ? "\\t" : String.valueOf(separator)) + "'), quotes or line breaks"
                            + " with \"...\"");
                }
                Map<String, Object> row = new LinkedHashMap<>();
                for (int i = 0; i < names.size(); i++) {
                    Field field = record.get(i);
                    row.put(names.get(i), field.text.isEmpty() && !field.quoted ? null : field.text);
                }
                rows.add(row);
                lines.add(recordLine);
            }
            if (rows.isEmpty()) {
                return Dataset.fromColumns(emptyColumns(names));
            }
            return Dataset.fromRows(rows).withLines(lines.stream().mapToLong(Long::longValue).toArray());
        } catch (IOException e) {
            throw DatasetException.inFile(file, "read failed: " + e, e);
        }
    }

    private static Map<String, List<?>> emptyColumns(List<String> names) {
        Map<String, List<?>> columns = new LinkedHashMap<>();
        for (String name : names) {
            columns.put(name, List.of());
        }
        return columns;
    }

    /** One parsed field: its text and whether it was quoted. */
    private record Field(String text, boolean quoted) {}

    private void skipByteOrderMark() throws IOException {
        int c = read();
        if (c != '\uFEFF') {
            pending = c;
        }
    }

    private int read() throws IOException {
        if (pending != -2) {
            int c = pending;
            pending = -2;
            return c;
        }
        return in.read();
    }

    /** The next record, or null at the end of input. Advances {@link #line} past it. */
    private List<Field> readRecord() throws IOException {
        int c = read();
        if (c == -1) {
            return null;
        }
        pending = c;
        List<Field> fields = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        while (true) {
            c = read();
            if (c == '"' && text.length() == 0) {
                fields.add(new Field(readQuoted(), true));
                c = read();
                if (c == separator) {
                    continue;
                }
                if (c == -1 || c == '\n' || c == '\r') {
                    endOfLine(c);
                    return fields;
                }
                throw DatasetException.atLine(file, line, "unexpected character '" + (char) c
                        + "' after a closing quote; inside a quoted field write a quote as \"\"");
            }
            if (c == separator) {
                fields.add(new Field(text.toString(), false));
                text.setLength(0);
            } else if (c == -1 || c == '\n' || c == '\r') {
                fields.add(new Field(text.toString(), false));
                endOfLine(c);
                return fields;
            } else {
                text.append((char) c);
            }
        }
    }

    /** The body of a quoted field, the opening quote already read. */
    private String readQuoted() throws IOException {
        long start = line;
        StringBuilder text = new StringBuilder();
        while (true) {
            int c = read();
            if (c == -1) {
                throw DatasetException.atLine(file, start, "a quoted field is never closed; add the closing \" "
                        + "(and write quotes inside it as \"\")");
            }
            if (c == '"') {
                int next = read();
                if (next == '"') {
                    text.append('"');
                    continue;
                }
                pending = next;
                return text.toString();
            }
            if (c == '\r') {
                text.append('\r');
                int next = read();
                if (next == '\n') {
                    text.append('\n');
                } else {
                    pending = next;
                }
                line++;
                continue;
            }
            if (c == '\n') {
                line++;
            }
            text.append((char) c);
        }
    }

    private void endOfLine(int c) throws IOException {
        if (c == '\r') {
            int next = read();
            if (next != '\n') {
                pending = next;
            }
        }
        if (c != -1) {
            line++;
        }
    }
}
