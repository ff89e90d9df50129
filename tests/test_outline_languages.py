"""Code outlines on what real code does to a grammar (issue 10, part 1).

Each test is a small snippet of a construct found in public code (fmt, zlib,
serilog, okio, plenary.nvim, nvm, rails, zod, simplejson) that an outline
once got wrong: macros around C++ declarations, C# ``#if`` between a
signature and its body, multi-line Kotlin headers, Lua function values, a
Bash script in a ``{ }`` group, parse errors that emptied or cut an outline.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from nasfs.outline.code import outline_code
from nasfs.outline.model import Outline

from .conftest import header
from .mounts import Mount


def outline(source: str, language: str) -> Outline:
    found = outline_code(source.encode(), language)
    assert found is not None
    return found


def names(source: str, language: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, last line) of every entry."""
    return [(".".join(e.path), e.start, e.end) for e in outline(source, language).entries]


def labels(source: str, language: str) -> list[str]:
    return [e.label for e in outline(source, language).entries]


# --- C++ and C macros ------------------------------------------------------------

FMT = """\
FMT_BEGIN_NAMESPACE
namespace detail {
struct file_access_tag {};
}  // namespace detail

FMT_EXPORT template <typename T, size_t SIZE = inline_buffer_size,
                     FMT_ENABLE_IF(std::is_trivial<T>::value)>
class basic_memory_buffer : public detail::buffer<T> {
 private:
  FMT_NO_UNIQUE_ADDRESS Allocator alloc_;
  FMT_CONSTEXPR20 void deallocate() {}

 public:
  FMT_CONSTEXPR20 basic_memory_buffer(basic_memory_buffer&& other) noexcept
      : detail::buffer<T>(grow) {}
  FMT_CONSTEXPR20 ~basic_memory_buffer() { deallocate(); }
  auto operator=(basic_memory_buffer&& other) noexcept -> basic_memory_buffer& {
    return *this;
  }
};

class FMT_API file {
 public:
  FMT_API void close();
  FMT_API auto read(void* buffer, size_t count) -> size_t { return 0; }
};
FMT_END_NAMESPACE

struct after_end_namespace {
  int x;
};
"""


def test_cpp_namespace_macros_keep_the_namespace_and_what_follows() -> None:
    found = names(FMT, "cpp")
    assert ("detail", 2, 4) in found
    assert ("detail.file_access_tag", 3, 3) in found
    assert ("after_end_namespace", 29, 31) in found


def test_cpp_exported_template_class_is_itself_with_its_members() -> None:
    found = names(FMT, "cpp")
    assert ("basic_memory_buffer", 6, 20) in found  # from FMT_EXPORT template <...> to };
    members = [n for n, _, _ in found if n.startswith("basic_memory_buffer.")]
    assert members == [
        "basic_memory_buffer.deallocate",
        "basic_memory_buffer.basic_memory_buffer",
        "basic_memory_buffer.~basic_memory_buffer",
        "basic_memory_buffer.operator=",
    ]


def test_cpp_class_with_export_macro_keeps_its_members() -> None:
    found = names(FMT, "cpp")
    assert ("file", 22, 26) in found
    assert ("file.read", 25, 25) in found


def test_cpp_template_specialisation_is_named_without_its_arguments() -> None:
    source = "namespace std {\ntemplate <> struct numeric_limits<double_double> {\n  int x;\n};\n}\n"
    assert ("std.numeric_limits", 2, 4) in names(source, "cpp")


def test_c_exported_function_with_ifdef_inside_an_expression() -> None:
    # zlib's deflateResetKeep: an #ifdef inside an expression made it and what follows one ERROR.
    source = (
        "int ZEXPORT deflateResetKeep(z_streamp strm) {\n"
        "    s->status =\n"
        "#ifdef GZIP\n"
        "        s->wrap == 2 ? GZIP_STATE :\n"
        "#endif\n"
        "        INIT_STATE;\n"
        "    return Z_OK;\n"
        "}\n"
        "\n"
        "local void lm_init(deflate_state *s) {\n"
        "    s->window_size = (ulg)2L*s->w_size;\n"
        "}\n"
        "const char * ZEXPORT zError(int err) {\n"
        "    return ERR_MSG(err);\n"
        "}\n"
        "DWORD WINAPI worker(LPVOID arg) {\n"
        "    return 0;\n"
        "}\n"
    )
    assert names(source, "c") == [("deflateResetKeep", 1, 8), ("lm_init", 10, 12), ("zError", 13, 15), ("worker", 16, 18)]


def test_c_ifdef_splitting_a_switch_loses_only_that_function() -> None:
    # zlib's inflate(): an #ifdef/#else inside a switch that tree-sitter cannot place
    # made the rest of inflate.c one ERROR node; the functions after it were lost.
    source = (
        "int ZEXPORT inflate(z_streamp strm, int flush) {\n"
        "    switch (state->mode) {\n"
        "        case HEAD:\n"
        "#ifdef GUNZIP\n"
        "            if (x) {\n"
        "#else\n"
        "            if (y) {\n"
        "#endif\n"
        "                break;\n"
        "            }\n"
        "    }\n"
        "}\n"
        "\n"
        "int ZEXPORT inflateEnd(z_streamp strm) {\n"
        "    return Z_OK;\n"
        "}\n"
        "\n"
        "long ZEXPORT inflateMark(z_streamp strm) {\n"
        "    return 0;\n"
        "}\n"
    )
    result = outline(source, "c")
    found = [(".".join(e.path), e.start, e.end) for e in result.entries]
    assert ("inflateEnd", 14, 16) in found
    assert ("inflateMark", 18, 20) in found
    assert result.partial


def test_no_label_or_name_holds_a_newline() -> None:
    source = "template <typename T>\nstruct formatter<\n    T, Char> {\n  int x;\n};\n"
    for entry in outline(source, "cpp").entries:
        assert "\n" not in entry.label and all("\n" not in p for p in entry.path)


# --- C# ----------------------------------------------------------------------------

SERILOG = """\
namespace Serilog.Core.Sinks;

public interface ILogger
{
#if FEATURE_DEFAULT_INTERFACE
    [CustomDefaultMethodImplementation]
#endif
    ILogger ForContext(ILogEventEnricher enricher)
#if FEATURE_DEFAULT_INTERFACE
        => new LoggerConfiguration()
            .WriteTo.Logger(this)
            .ForContext(enricher)
#endif
    ;

    ILogger ForContext(IEnumerable<ILogEventEnricher> enrichers)
#if FEATURE_DEFAULT_INTERFACE
    {
        return this;
    }
#else
    ;
#endif
}

sealed class ConditionalSink : ILogEventSink, IDisposable
#if FEATURE_ASYNCDISPOSABLE
    , IAsyncDisposable
#endif
{
    public void Emit(LogEvent logEvent) { }

#if FEATURE_ASYNCDISPOSABLE
    public ValueTask DisposeAsync() => default;
#endif
}
"""


def test_csharp_if_between_signature_and_body() -> None:
    found = names(SERILOG, "csharp")
    assert found[:4] == [
        ("Serilog.Core.Sinks", 1, 1),
        ("ILogger", 3, 24),
        ("ILogger.ForContext", 6, 14),  # from its attribute
        ("ILogger.ForContext", 16, 20),
    ]
    assert not any("#if" in label for label in labels(SERILOG, "csharp"))
    assert labels(SERILOG, "csharp")[4] == "sealed class ConditionalSink : ILogEventSink, IDisposable , IAsyncDisposable"


def test_csharp_methods_inside_if_blocks() -> None:
    found = names(SERILOG, "csharp")
    assert ("ConditionalSink", 26, 36) in found
    assert ("ConditionalSink.Emit", 31, 31) in found
    assert ("ConditionalSink.DisposeAsync", 34, 34) in found


# serilog's ILogger.cs: a default body when the feature is on, ``;`` when it is off.
SERILOG_ELSE = """\
public interface ILogger
{
    ILogger ForContext(IEnumerable<ILogEventEnricher> enrichers)
#if FEATURE_DEFAULT_INTERFACE
    {
        return this;
    }
#else
        ;
#endif

    ILogger ForContext(Type source)
#if FEATURE_DEFAULT_INTERFACE
    {
        return this;
    }
#else
    ;
#endif

    void Write(LogEvent logEvent);
}
"""


def test_csharp_else_branch_that_only_ends_a_member() -> None:
    """Both branches kept, the ``;`` after a body ended the interface's members
    (serilog's ILogger.cs: the interface and every ``ForContext`` overload missing)."""
    assert names(SERILOG_ELSE, "csharp") == [
        ("ILogger", 1, 22),
        ("ILogger.ForContext", 3, 7),
        ("ILogger.ForContext", 12, 16),  # an overload: its own entry
        ("ILogger.Write", 21, 21),
    ]


# --- Kotlin --------------------------------------------------------------------------

MOSHI = """\
@JsonQualifier @Retention(RUNTIME) annotation class TestAnnotation1

object Adapters {
  val BOOLEAN: JsonAdapter<Boolean> =
    object : JsonAdapter<Boolean>() {
      override fun fromJson(reader: JsonReader) = reader.nextBoolean()
    }

  fun sink(): BufferedSink {
    try {
      return object : Sink {
        override fun write(source: Buffer) {}
      }.buffer()
    } finally {}
  }
}
"""


def test_kotlin_members_of_anonymous_objects_in_expressions_and_annotated_classes() -> None:
    found = {name for name, _, _ in names(MOSHI, "kotlin")}
    assert "TestAnnotation1" in found  # after a line of annotations, one with arguments
    assert "Adapters.fromJson" in found  # in a property's object value
    assert "Adapters.sink.write" in found  # return object : Sink {...}.buffer(), in a try

OKIO = """\
class FileHandle
private constructor(
  val readWrite: Boolean,
) : Closeable {
  fun read(): Int = 0

  companion object {
    fun open(): FileHandle = FileHandle(true)
  }
}
@JvmName("x") fun f() {}
"""


def test_kotlin_class_header_continued_by_private_constructor() -> None:
    found = names(OKIO, "kotlin")
    assert ("FileHandle", 1, 10) in found
    assert ("FileHandle.read", 5, 5) in found
    assert labels(OKIO, "kotlin")[0] == "class FileHandle private constructor(val readWrite: Boolean,) : Closeable"


def test_kotlin_companion_object_is_listed() -> None:
    found = names(OKIO, "kotlin")
    assert ("FileHandle.Companion", 7, 9) in found
    assert ("FileHandle.Companion.open", 8, 8) in found


def test_kotlin_annotated_one_line_fun() -> None:
    assert ("f", 11, 11) in names(OKIO, "kotlin")


# --- Lua -------------------------------------------------------------------------------


def test_lua_functions_assigned_to_fields_and_locals() -> None:
    source = (
        "local M = {}\n"
        "M.wrap = function(fn)\n"
        "  return fn\n"
        "end\n"
        "local execute = function(cmd)\n"
        "  return cmd\n"
        "end\n"
        "local mt = {\n"
        "  __call = function(self) end,\n"
        "  name = 'data',\n"
        "}\n"
        "local config = { a = 1 }\n"
        "return M\n"
    )
    assert names(source, "lua") == [("M.wrap", 2, 4), ("execute", 5, 7), ("mt", 8, 11), ("mt.__call", 9, 9)]


# --- Bash --------------------------------------------------------------------------------


def test_bash_script_in_a_top_level_group() -> None:
    source = (
        "{ # this ensures the entire script is downloaded #\n"
        "nvm_is_zsh() {\n"
        '  [ -n "${ZSH_VERSION-}" ]\n'
        "}\n"
        "nvm_echo() {\n"
        "  command printf %s\\\\n \"$*\" 2>/dev/null\n"
        "}\n"
        "}\n"
    )
    assert names(source, "bash") == [("nvm_is_zsh", 2, 4), ("nvm_echo", 5, 7)]


def test_bash_parse_error_keeps_the_other_functions() -> None:
    source = "first() {\n  echo one\n}\n\nbroken() {\n  case $x in\n    a) echo ;;\n  esac esac )\n}\n\nlast() {\n  echo two\n}\n"
    result = outline(source, "bash")
    found = [(".".join(e.path), e.start, e.end) for e in result.entries]
    assert ("first", 1, 3) in found and ("last", 11, 13) in found
    assert result.partial


# --- TypeScript, Ruby, Python --------------------------------------------------------------


def test_typescript_parse_error_does_not_cut_the_outline() -> None:
    source = (
        "export function before(): number {\n"
        "  return 1;\n"
        "}\n"
        "export const broken = <T,>(x: T) => x as unknown as satisfies T;\n"
        "}\n"
        "export function after(): number {\n"
        "  return 2;\n"
        "}\n"
        "export interface Shape {\n"
        "  area(): number;\n"
        "}\n"
    )
    result = outline(source, "typescript")
    found = [".".join(e.path) for e in result.entries]
    assert "before" in found and "after" in found and "Shape" in found
    assert result.partial


def test_ruby_private_def() -> None:
    source = "class A\n  private def x\n    1\n  end\n\n  protected def y = 2\nend\n"
    assert names(source, "ruby") == [("A", 1, 7), ("A.x", 2, 4), ("A.y", 6, 6)]


def test_python_multi_line_signature_is_joined_whole() -> None:
    source = (
        "def py_scanstring(s, end, encoding=None, strict=True,\n"
        "        _b=BACKSLASH, _m=STRINGCHUNK.match, _join=u''.join,\n"
        "        _PY3=PY3, _maxunicode=sys.maxunicode):\n"
        '    """Scan the string s for a JSON string."""\n'
        "    return s\n"
    )
    assert labels(source, "python") == [
        "def py_scanstring(s, end, encoding=None, strict=True, _b=BACKSLASH, _m=STRINGCHUNK.match, "
        "_join=u''.join, _PY3=PY3, _maxunicode=sys.maxunicode)"
    ]


def test_a_clean_file_is_not_partial() -> None:
    assert not outline("def f():\n    return 1\n", "python").partial
    assert not outline(FMT, "cpp").partial


# --- the header, through the mount ----------------------------------------------------------


def test_partial_is_declared_in_the_header_on_the_mount(mounted: Mount, home: Path) -> None:
    # Bodies long enough that the outline, not the whole file, is what @outline serves.
    body = "".join(f"  echo line {i} of a longer body\n" for i in range(30))
    (home / "broken.sh").write_text(f"first() {{\n{body}}}\nbroken() {{\n  esac esac )\n}}\nlast() {{\n{body}}}\n")
    (home / "clean.sh").write_text(f"first() {{\n{body}}}\nlast() {{\n{body}}}\n")
    text = subprocess.run(["cat", str(mounted.mountpoint / "broken.sh@outline")], check=True, capture_output=True).stdout
    assert header(text)["view"] == "outline" and header(text)["partial"] == "true"
    assert text.splitlines()[1:] == [b"1-32 first()", b"36-67 last()"]
    clean = subprocess.run(["cat", str(mounted.mountpoint / "clean.sh@outline")], check=True, capture_output=True).stdout
    assert header(clean)["view"] == "outline" and "partial" not in header(clean)


# --- more of what the benchmark against ctags found ---------------------------------------


def test_javascript_module_pattern_and_callbacks() -> None:
    source = (
        "(function(root, factory) {\n"
        "  factory(root.jQuery);\n"
        "})(this, function($) {\n"
        "  var _ = function() {\n"
        "    return {\n"
        "      isMsie: function() { return false; },\n"
        "      each: function each(collection, cb) {}\n"
        "    };\n"
        "  }();\n"
        "  var defaults = { wrapper: 'tt' };\n"
        "});\n"
        "app.init = function init() {\n"
        "  this.on('mount', function onmount(parent) {});\n"
        "};\n"
    )
    assert names(source, "javascript") == [
        ("_", 4, 9),
        ("_.isMsie", 6, 6),
        ("_.each", 7, 7),
        ("app.init", 12, 14),
        ("app.init.onmount", 13, 13),
    ]


def test_kotlin_members_of_object_literals_and_enum_entries() -> None:
    source = (
        "class RealSource {\n"
        "  fun inputStream(): InputStream {\n"
        "    return object : InputStream() {\n"
        "      override fun read(): Int = 1\n"
        "    }\n"
        "  }\n"
        "}\n"
        "enum class Factory {\n"
        "  NewBuffer {\n"
        "    override fun pipe(): Pipe = Pipe()\n"
        "  },\n"
        "  Plain;\n"
        "}\n"
    )
    assert names(source, "kotlin") == [
        ("RealSource", 1, 7),
        ("RealSource.inputStream", 2, 6),
        ("RealSource.inputStream.read", 4, 4),
        ("Factory", 8, 13),
        ("Factory.NewBuffer", 9, 11),
        ("Factory.NewBuffer.pipe", 10, 10),
    ]


def test_lua_function_fields_of_tables_passed_to_calls() -> None:
    source = (
        "local exports = setmetatable({}, {\n"
        "  __index = function(t, k)\n"
        "    return k\n"
        "  end,\n"
        "})\n"
        'describe("spy", function()\n'
        "  local blocking = function() end\n"
        "end)\n"
    )
    assert names(source, "lua") == [("__index", 2, 4), ("blocking", 7, 7)]


def test_cpp_macro_calls_alone_on_a_line_and_trailing_underscore_macros() -> None:
    source = (
        "namespace testing {\n"
        "GTEST_DISABLE_MSC_WARNINGS_PUSH_(4251)\n"
        "class GTEST_API_ Message {\n"
        " public:\n"
        "  GTEST_API_ bool IsTrue(bool condition);\n"
        "  Message& operator<<(int n) { return *this; }\n"
        "};\n"
        "GTEST_DISABLE_MSC_WARNINGS_POP_()\n"
        "}  // namespace testing\n"
    )
    result = outline(source, "cpp")
    assert [(".".join(e.path), e.start, e.end) for e in result.entries] == [
        ("testing", 1, 9),
        ("testing.Message", 3, 7),
        ("testing.Message.operator<<", 6, 6),
    ]
    assert not result.partial


def test_an_error_inside_a_namespace_is_cut_there_keeping_the_scope() -> None:
    source = (
        "namespace outer {\n"
        "void broken() {\n"
        "  int x = (1 +;\n"
        "  if (x) {\n"
        "}\n"
        "\n"
        "void after() {\n"
        "}\n"
        "}  // namespace outer\n"
    )
    found = names(source, "cpp")
    assert ("outer.after", 7, 8) in found


def test_kotlin_constructor_line_with_several_modifiers() -> None:
    source = (
        "actual open class ByteString\n"
        "internal actual constructor(\n"
        "  val data: ByteArray,\n"
        ") {\n"
        '  actual open fun utf8(): String = ""\n'
        "}\n"
    )
    assert names(source, "kotlin") == [("ByteString", 1, 6), ("ByteString.utf8", 5, 5)]


def test_ruby_methods_in_blocks_and_method_bodies() -> None:
    source = (
        'describe "x" do\n'
        "  it 'y' do\n"
        "    c = Class.new(Base) do\n"
        "      def initialize(*)\n"
        "      end\n"
        "    end\n"
        "  end\n"
        "end\n"
        "module Quiet\n"
        "  def self.registered(app)\n"
        "    app.prepend(Module.new do\n"
        "      def log(env)\n"
        "      end\n"
        "    end)\n"
        "  end\n"
        "  def one; 1; end\n"
        "end\n"
    )
    assert names(source, "ruby") == [
        ("initialize", 4, 5),
        ("Quiet", 9, 17),
        ("Quiet.registered", 10, 15),
        ("Quiet.registered.log", 12, 13),
        ("Quiet.one", 16, 16),
    ]
    assert labels(source, "ruby")[-1] == "def one; 1; end"


# --- Scala (measured against scalameta) ------------------------------------------


def test_scala_def_with_an_indented_body_ends_on_its_last_line() -> None:
    # cats' FoldableLaws: tree-sitter-scala ends such a def after the next one's doc comment.
    source = (
        "trait FoldableLaws[F[_]] {\n"
        "  def existsConsistentWithFind[A](fa: F[A], p: A => Boolean): Boolean =\n"
        "    F.exists(fa)(p) == F.find(fa)(p).isDefined\n"
        "\n"
        "  /**\n"
        "   * Monadic folding.\n"
        "   */\n"
        "  def foldMIdentity[A, B](fa: F[A]): IsEq[B] =\n"
        "    fa.foldLeft(b)\n"
        "}\n"
    )
    assert names(source, "scala") == [
        ("FoldableLaws", 1, 10),
        ("FoldableLaws.existsConsistentWithFind", 2, 3),
        ("FoldableLaws.foldMIdentity", 8, 9),
    ]


def test_scala_package_object_local_defs_and_anonymous_classes() -> None:
    # cats' free/package.scala, FunctionInstances and instances/future.scala; scopt's specs.
    source = (
        "package object free {\n"
        "  object Trampoline extends TrampolineFunctions\n"
        "}\n"
        "trait FunctionInstances {\n"
        "  implicit def groupForFunction0[A](implicit G: Group[A]): Group[() => A] =\n"
        "    new Function0Group[A] { def A: Group[A] = G }\n"
        "  implicit val monad: Monad[Future] = new Monad[Future] {\n"
        "    def pure[A](x: A): Future[A] = Future.successful(x)\n"
        "  }\n"
        "  def helpParser(args: String*): Unit = {\n"
        "    case class Config(foo: Int = -1)\n"
        "    val parser = new OptionParser[Unit](\"scopt\") {\n"
        "      override def terminate(exitState: Either[String, Unit]): Unit = ()\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
    assert names(source, "scala") == [
        ("free", 1, 3),
        ("free.Trampoline", 2, 2),
        ("FunctionInstances", 4, 16),
        ("FunctionInstances.groupForFunction0", 5, 6),
        ("FunctionInstances.groupForFunction0.A", 6, 6),
        ("FunctionInstances.pure", 8, 8),
        ("FunctionInstances.helpParser", 10, 15),
        ("FunctionInstances.helpParser.Config", 11, 11),
        ("FunctionInstances.helpParser.terminate", 13, 13),
    ]


def test_scala_defs_in_blocks_passed_to_calls_lambdas_and_cases() -> None:
    # scopt's and fastparse's tests (``test("x") { def check ... }``), fastparse's perftests.
    source = (
        "object Spec extends TestSuite {\n"
        '  test("compose") {\n'
        "    trait ConfigLike[R] {\n"
        "      def withDebug(value: Boolean): R\n"
        "    }\n"
        "  }\n"
        "  def expr = P(expr1).map { case (pre, fs) =>\n"
        "    def climb(minPrec: Int): Expr = pre\n"
        "    climb(0)\n"
        "  }\n"
        "  def unary(op: Char) = P(\n"
        "    expr1.map { e =>\n"
        "      def k2 = op match { case '+' => 1 }\n"
        "      k2\n"
        "    }\n"
        "  )\n"
        "  def `import`(index: Int) = P(string)\n"
        "}\n"
    )
    assert names(source, "scala") == [
        ("Spec", 1, 18),
        ("Spec.ConfigLike", 3, 5),
        ("Spec.ConfigLike.withDebug", 4, 4),
        ("Spec.expr", 7, 10),
        ("Spec.expr.climb", 8, 8),
        ("Spec.unary", 11, 16),
        ("Spec.unary.k2", 13, 13),
        ("Spec.import", 17, 17),
    ]


# --- Swift (measured against the grammars-v4 ANTLR grammar) -----------------------


def test_swift_subscripts_and_local_functions() -> None:
    # vapor's Collection+Safe and Extendable (subscripts), swift-argument-parser's tests
    # (``func assert`` inside a test method), vapor's ``func `for`(...)``.
    source = (
        "public protocol Storage {\n"
        "    subscript(key: String) -> Int? { get }\n"
        "}\n"
        "extension Collection {\n"
        "    subscript(safe index: Index) -> Element? {\n"
        "        indices.contains(index) ? self[index] : nil\n"
        "    }\n"
        "}\n"
        "extension InputOriginTests {\n"
        "    func testIsDefaultValue() {\n"
        "        func assert(elements: [Int], expected: Bool) {\n"
        "            XCTAssertEqual(elements.isEmpty, expected)\n"
        "        }\n"
        "        assert(elements: [], expected: true)\n"
        "    }\n"
        "    public func `for`(_ request: Request) -> any ViewRenderer {\n"
        "        PlaintextRenderer()\n"
        "    }\n"
        "}\n"
    )
    assert names(source, "swift") == [
        ("Storage", 1, 3),
        ("Storage.subscript", 2, 2),
        ("Collection", 4, 8),
        ("Collection.subscript", 5, 7),
        ("InputOriginTests", 9, 19),
        ("InputOriginTests.testIsDefaultValue", 10, 15),
        ("InputOriginTests.testIsDefaultValue.assert", 11, 13),
        ("InputOriginTests.for", 16, 18),
    ]
    assert labels(source, "swift")[3] == "subscript(safe index: Index) -> Element?"


def test_swift_init_label_is_its_signature_not_its_attribute() -> None:
    # swift-argument-parser's ArgumentHelp: ``@available(...)`` over several lines above ``init``.
    source = (
        "public struct ArgumentHelp {\n"
        "  @available(\n"
        "    *, deprecated,\n"
        '    message: "Use init(_:discussion:) instead."\n'
        "  )\n"
        "  public init(\n"
        '    _ abstract: String = ""\n'
        "  ) {\n"
        "    self.abstract = abstract\n"
        "  }\n"
        "}\n"
    )
    assert names(source, "swift") == [("ArgumentHelp", 1, 11), ("ArgumentHelp.init", 2, 10)]
    assert labels(source, "swift")[1] == 'public init(_ abstract: String = "")'


def test_swift_functions_in_computed_properties_and_closures() -> None:
    # swift-argument-parser's ArgumentParserToolInfoTests: a function inside ``var description``.
    source = (
        "extension DecodingError: CustomStringConvertible {\n"
        "  public var description: String {\n"
        "    func pathDescription(_ path: [any CodingKey]) -> String {\n"
        '      return ""\n'
        "    }\n"
        "    return pathDescription([])\n"
        "  }\n"
        "  var x: Int {\n"
        "    get { func g() -> Int { 1 }; return g() }\n"
        "    set { }\n"
        "  }\n"
        "}\n"
        "let closure = { () -> Void in\n"
        "    func helper() {}\n"
        "}\n"
    )
    assert names(source, "swift") == [
        ("DecodingError", 1, 12),
        ("DecodingError.pathDescription", 3, 5),
        ("DecodingError.g", 9, 9),
        ("helper", 14, 14),
    ]


def test_scala_3_extension_methods_and_utest_blocks() -> None:
    # fastparse's src-3/fastparse/package.scala (``extension``) and FailureTests (utest's ``-``).
    source = (
        "package object fastparse {\n"
        "  extension [T](inline parse0: P[T])\n"
        "    /** Tests the output. */\n"
        "    inline def filter(f: T => Boolean): P[T] =\n"
        "      filterInline[T](parse0)(f)\n"
        "    inline def map[V](f: T => V): P[V] = mapInline(parse0)(f)\n"
        "}\n"
        "object FailureTests extends TestSuite {\n"
        '  def tests = Tests {\n'
        '    test("either") - check {\n'
        '      def parseB[$: P] = P("a" | "b")\n'
        "      parseB(_)\n"
        "    }\n"
        '    test("named") - checkOffset(\n'
        "      parser = {\n"
        '        def parseA[$: P] = P("a")\n'
        "        parseA(_)\n"
        "      }\n"
        "    )\n"
        "  }\n"
        "}\n"
    )
    assert names(source, "scala") == [
        ("fastparse", 1, 7),
        ("fastparse.filter", 4, 5),
        ("fastparse.map", 6, 6),
        ("FailureTests", 8, 21),
        ("FailureTests.tests", 9, 20),
        ("FailureTests.tests.parseB", 11, 11),
        ("FailureTests.tests.parseA", 16, 16),
    ]
