// Swift definitions from the ANTLR Swift 5 grammar (antlr/grammars-v4, swift/swift5), for
// scripts/bench/outline_recall.py: an independent reference (not tree-sitter) for Swift outlines.
//
// Usage: java -cp BUILD:antlr4-runtime.jar SwiftDefs TIMEOUT_MS FILE...
// Prints one JSON line per file: {"path", "errors" (syntax errors reported), "error" (the first),
// "timeout", "ms", "defs": [{"kind",
// "name", "line", "end"}]}; "line" is the line of the definition's name (as ctags gives it),
// "end" the line of its last token.

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.antlr.v4.runtime.BaseErrorListener;
import org.antlr.v4.runtime.CharStreams;
import org.antlr.v4.runtime.CommonTokenStream;
import org.antlr.v4.runtime.ParserRuleContext;
import org.antlr.v4.runtime.RecognitionException;
import org.antlr.v4.runtime.Recognizer;
import org.antlr.v4.runtime.Token;
import org.antlr.v4.runtime.atn.PredictionMode;
import org.antlr.v4.runtime.misc.ParseCancellationException;
import org.antlr.v4.runtime.BailErrorStrategy;
import org.antlr.v4.runtime.tree.ParseTree;
import org.antlr.v4.runtime.tree.ParseTreeWalker;

public class SwiftDefs extends Swift5ParserBaseListener {
    private final List<String> defs = new ArrayList<>();

    private static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }

    private void add(String kind, String name, Token at, ParserRuleContext whole) {
        if (name.startsWith("`") && name.endsWith("`") && name.length() > 1) name = name.substring(1, name.length() - 1);
        int end = whole.getStop() == null ? at.getLine() : whole.getStop().getLine();
        defs.add("{\"kind\":" + quote(kind) + ",\"name\":" + quote(name) + ",\"line\":" + at.getLine()
                + ",\"end\":" + end + "}");
    }

    private void add(String kind, ParserRuleContext name, ParserRuleContext whole) {
        if (name != null) add(kind, name.getText(), name.getStart(), whole);
    }

    @Override public void enterClass_declaration(Swift5Parser.Class_declarationContext c) { add("class", c.class_name(), c); }
    @Override public void enterStruct_declaration(Swift5Parser.Struct_declarationContext c) { add("struct", c.struct_name(), c); }
    @Override public void enterProtocol_declaration(Swift5Parser.Protocol_declarationContext c) { add("protocol", c.protocol_name(), c); }
    @Override public void enterUnion_style_enum(Swift5Parser.Union_style_enumContext c) { add("enum", c.enum_name(), (ParserRuleContext) c.getParent()); }
    @Override public void enterRaw_value_style_enum(Swift5Parser.Raw_value_style_enumContext c) { add("enum", c.enum_name(), (ParserRuleContext) c.getParent()); }
    @Override public void enterFunction_declaration(Swift5Parser.Function_declarationContext c) { add("function", c.function_name(), c); }
    @Override public void enterProtocol_method_declaration(Swift5Parser.Protocol_method_declarationContext c) { add("function", c.function_name(), c); }
    @Override public void enterInitializer_declaration(Swift5Parser.Initializer_declarationContext c) { add("init", "init", c.initializer_head().INIT().getSymbol(), c); }
    @Override public void enterProtocol_initializer_declaration(Swift5Parser.Protocol_initializer_declarationContext c) { add("init", "init", c.initializer_head().INIT().getSymbol(), c); }
    @Override public void enterDeinitializer_declaration(Swift5Parser.Deinitializer_declarationContext c) { add("deinit", "deinit", c.DEINIT().getSymbol(), c); }
    @Override public void enterSubscript_declaration(Swift5Parser.Subscript_declarationContext c) { add("subscript", "subscript", c.subscript_head().SUBSCRIPT().getSymbol(), c); }
    @Override public void enterProtocol_subscript_declaration(Swift5Parser.Protocol_subscript_declarationContext c) { add("subscript", "subscript", c.subscript_head().SUBSCRIPT().getSymbol(), c); }

    @Override public void enterExtension_declaration(Swift5Parser.Extension_declarationContext c) {
        // ``extension A.B<T>``: named by its last type name, as ctags names a qualified definition.
        Swift5Parser.Type_identifierContext type = c.type_identifier();
        while (type != null && type.type_identifier() != null) type = type.type_identifier();
        if (type != null) add("extension", type.type_name(), c);
    }

    /** SLL prediction first (fast, bails at the first error), the full LL parse only when it fails. */
    private static ParseTree parse(String source, int[] errors, String[] first) {
        Swift5Parser parser = parser(source, null, null);
        parser.getInterpreter().setPredictionMode(PredictionMode.SLL);
        parser.setErrorHandler(new BailErrorStrategy());
        try {
            return parser.top_level();
        } catch (ParseCancellationException e) {
            return parser(source, errors, first).top_level();
        }
    }

    private static Swift5Parser parser(String source, int[] errors, String[] first) {
        Swift5Lexer lexer = new Swift5Lexer(CharStreams.fromString(source));
        Swift5Parser parser = new Swift5Parser(new CommonTokenStream(lexer));
        lexer.removeErrorListeners();
        parser.removeErrorListeners();
        if (errors != null) {
            BaseErrorListener count = new BaseErrorListener() {
                @Override public void syntaxError(Recognizer<?, ?> r, Object o, int line, int col, String msg, RecognitionException e) {
                    if (errors[0]++ == 0) first[0] = line + ":" + col + " " + msg;
                }
            };
            lexer.addErrorListener(count);
            parser.addErrorListener(count);
        }
        return parser;
    }

    /** Usage: SwiftDefs TIMEOUT_MS FILE...; a file not parsed within TIMEOUT_MS is given as "timeout". */
    @SuppressWarnings({"deprecation", "removal"})
    public static void main(String[] args) throws Exception {
        long timeout = Long.parseLong(args[0]);
        for (int i = 1; i < args.length; i++) {
            String path = args[i];
            String source = new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8);
            int[] errors = {0};
            String[] first = {""};
            SwiftDefs walker = new SwiftDefs();
            long started = System.nanoTime();
            // The grammar's predicates make some files take minutes; the parse runs in a thread of
            // its own, stopped at the time limit (Thread.stop: the parser holds no shared state).
            Thread work = new Thread(() -> ParseTreeWalker.DEFAULT.walk(walker, parse(source, errors, first)));
            work.setDaemon(true);
            work.start();
            work.join(timeout);
            boolean late = work.isAlive();
            if (late) {
                work.stop();
                work.join();
            }
            long ms = (System.nanoTime() - started) / 1000000;
            System.out.println("{\"path\":" + quote(path) + ",\"errors\":" + errors[0] + ",\"error\":" + quote(first[0]) + ",\"timeout\":" + late
                    + ",\"ms\":" + ms + ",\"defs\":[" + (late ? "" : String.join(",", walker.defs)) + "]}");
        }
    }
}
