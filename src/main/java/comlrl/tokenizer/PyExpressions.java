package comlrl.tokenizer;

import com.hubspot.jinjava.el.ExtendedSyntaxBuilder;
import com.hubspot.jinjava.el.TruthyTypeConverter;
import com.hubspot.jinjava.el.ext.AdditionOperator;
import com.hubspot.jinjava.el.ext.CollectionMembershipOperator;
import com.hubspot.jinjava.el.ext.CollectionNonMembershipOperator;
import com.hubspot.jinjava.el.ext.ExtendedParser;
import com.hubspot.jinjava.el.ext.PowerOfOperator;
import com.hubspot.jinjava.el.ext.StringConcatOperator;
import com.hubspot.jinjava.el.ext.TruncDivOperator;
import java.math.BigInteger;
import java.util.Map;
import java.util.function.BinaryOperator;
import java.util.function.UnaryOperator;
import jinjava.de.odysseus.el.ExpressionFactoryImpl;
import jinjava.de.odysseus.el.misc.TypeConverter;
import jinjava.de.odysseus.el.tree.TreeStore;
import jinjava.de.odysseus.el.tree.impl.Builder;
import jinjava.de.odysseus.el.tree.impl.Cache;
import jinjava.de.odysseus.el.tree.impl.Parser;
import jinjava.de.odysseus.el.tree.impl.Scanner;
import jinjava.de.odysseus.el.tree.impl.Scanner.ScanException;
import jinjava.de.odysseus.el.tree.Bindings;
import jinjava.de.odysseus.el.tree.impl.ast.AstBinary;
import jinjava.de.odysseus.el.tree.impl.ast.AstLiteral;
import jinjava.de.odysseus.el.tree.impl.ast.AstNode;
import jinjava.de.odysseus.el.tree.impl.ast.AstUnary;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ExpressionFactory;

/**
 * The expression language of {@link ChatTemplate}'s Jinjava: Jinjava's own parser (Jinja2 syntax,
 * natural precedence), except that the arithmetic, {@code ~}, {@code ==} and {@code !=} nodes it
 * builds evaluate with {@link PyOperators} and bind as in Jinja2, {@code in} and {@code not in}
 * and {@code and} evaluate as Python's, integer literals beyond a long are Python ints, and
 * {@code none} is Python's None.
 * Jinjava's operators wrap ({@code 9223372036854775807 + 1}), saturate ({@code 10 ** 20}),
 * truncate ({@code -7 % 3 == -1}) and concatenate anything with strings ({@code 'a' + none}
 * gives "anull").
 */
final class PyExpressions {
    private PyExpressions() {}

    /** An expression factory like Jinjava's own (same features, type converter, no tree cache) with this parser. */
    static ExpressionFactory factory() {
        Builder builder = new PyBuilder(Builder.Feature.METHOD_INVOCATIONS, Builder.Feature.VARARGS);
        return new ExpressionFactoryImpl(new TreeStore(builder, new Cache(0)), new PyTypeConverter());
    }

    /** Jinjava's type conversions, with Python's bool() for conditions ({@code not}, {@code or}, {@code x if c else y}). */
    private static final class PyTypeConverter extends TruthyTypeConverter {
        private static final long serialVersionUID = 1L;

        @Override
        protected Boolean coerceToBoolean(Object value) {
            return PyValues.truthy(value);
        }
    }

    /** Python's {@code a and b}: {@code a} when it is false (b is not evaluated), else {@code b}. */
    private static final AstBinary.Operator AND = (bindings, context, left, right) -> {
        Object a = left.eval(bindings, context);
        return PyValues.truthy(a) ? right.eval(bindings, context) : a;
    };

    private static final class PyBuilder extends ExtendedSyntaxBuilder {
        private static final long serialVersionUID = 1L;

        PyBuilder(Builder.Feature... features) {
            super(features);
        }

        @Override
        protected Parser createParser(String expression) {
            return new PyParser(this, expression);
        }
    }

    /**
     * Jinjava's parser with Python's operators in place of its own, and Jinja2's precedence for
     * the arithmetic levels, loosest first:
     *
     * <pre>
     *   + -             left to right, over
     *   ~               left to right, over
     *   * / // %        left to right, over
     *   **              left to right (as Jinja2: 2 ** 3 ** 2 == 64), over
     *   unary - and filters (Jinjava's own level)
     * </pre>
     *
     * Jinjava puts {@code **} and {@code //} beside {@code *} ({@code 2 * 3 ** 2} gave 36) and
     * {@code ~} beside {@code +}.
     */
    private static final class PyParser extends ExtendedParser {
        private static final Map<AstBinary.Operator, AstBinary.Operator> BINARY = Map.of(
                AstBinary.ADD, pyBinary(PyOperators::add),
                AdditionOperator.OP, pyBinary(PyOperators::add),
                AstBinary.SUB, pyBinary(PyOperators::subtract),
                AstBinary.MUL, pyBinary(PyOperators::multiply),
                AstBinary.DIV, pyBinary(PyOperators::divide),
                AstBinary.MOD, pyBinary(PyOperators::modulo),
                AstBinary.EQ, pyBinary((a, b) -> Boolean.valueOf(PyOperators.equal(a, b))),
                AstBinary.NE, pyBinary((a, b) -> Boolean.valueOf(!PyOperators.equal(a, b))),
                AstBinary.AND, AND);
        private static final AstBinary.Operator FLOOR_DIVIDE = pyBinary(PyOperators::floorDivide);
        private static final AstBinary.Operator POWER = pyBinary(PyOperators::power);
        private static final AstBinary.Operator CONCAT = pyBinary(PyOperators::concat);
        private static final AstUnary.Operator NEGATE = pyUnary(PyOperators::negate);
        private static final AstNode NONE_LITERAL = new AstLiteral() {
            @Override
            public Object eval(Bindings bindings, ELContext context) {
                return PyValues.NONE;
            }

            @Override
            public void appendStructure(StringBuilder builder, Bindings bindings) {
                builder.append("none");
            }

            @Override
            public String toString() {
                return "none";
            }
        };

        PyParser(Builder context, String input) {
            super(context, input);
            membership(CollectionMembershipOperator.TOKEN, pyBinary((a, b) -> Boolean.valueOf(PyOperators.contains(b, a))));
            membership(CollectionNonMembershipOperator.TOKEN,
                    pyBinary((a, b) -> Boolean.valueOf(!PyOperators.contains(b, a))));
        }

        /** {@code in} and {@code not in}: Jinjava's extensions, at their precedence, evaluating as Python. */
        private void membership(Scanner.ExtensionToken token, AstBinary.Operator operator) {
            ExtensionPoint point = getExtensionHandler(token).getExtensionPoint();
            putExtensionHandler(token, new ExtensionHandler(point) {
                @Override
                public AstNode createAstNode(AstNode... children) {
                    return createAstBinary(children[0], children[1], operator);
                }
            });
        }

        /** {@code + -}, and the other extensions Jinjava parses at this level (keyword arguments' {@code =}). */
        @Override
        protected AstNode add(boolean required) throws ScanException, ParseException {
            AstNode v = concat(required);
            if (v == null) {
                return null;
            }
            while (true) {
                Scanner.Symbol symbol = getToken().getSymbol();
                if (symbol == Scanner.Symbol.PLUS) {
                    consumeToken();
                    v = createAstBinary(v, concat(true), AstBinary.ADD);
                } else if (symbol == Scanner.Symbol.MINUS) {
                    consumeToken();
                    v = createAstBinary(v, concat(true), AstBinary.SUB);
                } else if (isExtension(ExtensionPoint.ADD) && !isOperator(StringConcatOperator.TOKEN)) {
                    v = getExtensionHandler(consumeToken()).createAstNode(v, concat(true));
                } else {
                    return v;
                }
            }
        }

        /** {@code ~}. */
        private AstNode concat(boolean required) throws ScanException, ParseException {
            AstNode v = mul(required);
            while (v != null && isOperator(StringConcatOperator.TOKEN)) {
                consumeToken();
                v = createAstBinary(v, mul(true), CONCAT);
            }
            return v;
        }

        /** {@code * / // %}. */
        @Override
        protected AstNode mul(boolean required) throws ScanException, ParseException {
            AstNode v = power(required);
            if (v == null) {
                return null;
            }
            while (true) {
                Scanner.Symbol symbol = getToken().getSymbol();
                if (symbol == Scanner.Symbol.MUL || symbol == Scanner.Symbol.DIV || symbol == Scanner.Symbol.MOD) {
                    consumeToken();
                    v = createAstBinary(v, power(true), symbol == Scanner.Symbol.MUL ? AstBinary.MUL
                            : symbol == Scanner.Symbol.DIV ? AstBinary.DIV : AstBinary.MOD);
                } else if (isOperator(TruncDivOperator.TOKEN)) {
                    consumeToken();
                    v = createAstBinary(v, power(true), FLOOR_DIVIDE);
                } else {
                    return v;
                }
            }
        }

        /** {@code **}, over Jinjava's level of unary operators and filters. */
        private AstNode power(boolean required) throws ScanException, ParseException {
            AstNode v = filter(required);
            while (v != null && isOperator(PowerOfOperator.TOKEN)) {
                consumeToken();
                v = createAstBinary(v, filter(true), POWER);
            }
            return v;
        }

        private boolean isOperator(Scanner.ExtensionToken operator) {
            Scanner.Token token = getToken();
            return token.getSymbol() == Scanner.Symbol.EXTENSION && token.getImage().equals(operator.getImage());
        }

        private boolean isExtension(ExtensionPoint point) {
            Scanner.Token token = getToken();
            if (token.getSymbol() != Scanner.Symbol.EXTENSION) {
                return false;
            }
            ExtensionHandler handler = getExtensionHandler(token);
            return handler != null && handler.getExtensionPoint() == point;
        }

        @Override
        protected AstBinary createAstBinary(AstNode left, AstNode right, AstBinary.Operator operator) {
            return super.createAstBinary(left, right, BINARY.getOrDefault(operator, operator));
        }

        @Override
        protected AstUnary createAstUnary(AstNode child, AstUnary.Operator operator) {
            return super.createAstUnary(child, operator == AstUnary.NEG ? NEGATE : operator);
        }

        /**
         * Jinja2's constants {@code none} and {@code None} are Python's None ({@link PyValues#NONE}: it
         * prints "None"); Jinjava reads them as names of undefined variables, and its {@code null} as null.
         */
        @Override
        protected AstNode nonliteral() throws ScanException, ParseException {
            Scanner.Token token = getToken();
            if (token.getSymbol() == Scanner.Symbol.IDENTIFIER
                    && (token.getImage().equals("none") || token.getImage().equals("None"))) {
                consumeToken();
                return NONE_LITERAL;
            }
            return super.nonliteral();
        }

        @Override
        protected Number parseInteger(String string) throws ParseException {
            try {
                return Long.valueOf(string);
            } catch (NumberFormatException e) {
                return new BigInteger(string); // the scanner gives digits only: Python reads them as an int
            }
        }
    }

    private static AstBinary.Operator pyBinary(BinaryOperator<Object> operation) {
        return new AstBinary.SimpleOperator() {
            @Override
            protected Object apply(TypeConverter converter, Object a, Object b) {
                return operation.apply(a, b);
            }
        };
    }

    private static AstUnary.Operator pyUnary(UnaryOperator<Object> operation) {
        return new AstUnary.SimpleOperator() {
            @Override
            protected Object apply(TypeConverter converter, Object a) {
                return operation.apply(a);
            }
        };
    }
}
