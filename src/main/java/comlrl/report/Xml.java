package comlrl.report;

/**
 * Escaping for the report's markup, which is XHTML (well-formed XML, so that HTML and XML parsers
 * read it alike): {@code & < > " '} become entities, and the characters XML cannot hold at all (C0
 * controls other than tab, newline and carriage return; unpaired surrogates; U+FFFE, U+FFFF) become
 * U+FFFD.
 */
final class Xml {
    private Xml() {
    }

    /** {@code text} escaped for element content and for attribute values in double or single quotes. */
    static String escape(String text) {
        StringBuilder out = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> {
                    if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                        out.append(c).append(text.charAt(++i));
                    } else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' || Character.isSurrogate(c)
                            || c == '\uFFFE' || c == '\uFFFF') {
                        out.append('\uFFFD');
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.toString();
    }
}
