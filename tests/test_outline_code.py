"""Tree-sitter code outlines: exact labels, paths and line spans per language."""

from __future__ import annotations

import random

import pytest

from nasfs.outline.code import SPECS, language_for, outline_code
from nasfs.outline.code.signature import MAX_LABEL
from nasfs.outline.model import Outline


def rows(source: str, language: str) -> list[tuple[str, tuple[str, ...], int, int, int]]:
    """(label, path, start, end, depth) per entry, in outline order."""
    outline = outline_code(source.encode(), language)
    assert outline is not None
    assert outline.kind == f"code:{language}"
    assert outline.indent
    return [(e.label, e.path, e.start, e.end, e.depth) for e in outline.entries]


PYTHON = '''\
import os


@decorator
@other(1)
def top(x: int) -> str:
    def inner():
        return 1
    return str(x)


class Base(object):
    """Doc."""

    @property
    def name(self) -> str:
        return "b"

    async def run(self): pass

    class Nested:
        def deep(self, a,
                 b):
            pass


if os.name == "nt":
    def windows_only(): pass

type Alias = list[int]
type(x).attr = 1
'''


def test_python() -> None:
    assert rows(PYTHON, "python") == [
        ("def top(x: int) -> str", ("top",), 4, 9, 0),
        ("def inner()", ("top", "inner"), 7, 8, 1),
        ("class Base(object)", ("Base",), 12, 24, 0),
        ("def name(self) -> str", ("Base", "name"), 15, 17, 1),
        ("async def run(self)", ("Base", "run"), 19, 19, 1),
        ("class Nested", ("Base", "Nested"), 21, 24, 1),
        ("def deep(self, a, b)", ("Base", "Nested", "deep"), 22, 24, 2),
        ("def windows_only()", ("windows_only",), 28, 28, 0),
        ("type Alias = list[int]", ("Alias",), 30, 30, 0),
    ]


def test_python_definitions_inside_function_blocks() -> None:
    source = (
        "def f():\n"
        "    s = 'no definitions in here'\n"
        "    try:\n"
        "        import fast\n"
        "    except ImportError:\n"
        "        class Slow: pass\n"
        "def g():\n"
        "    return 'class x'\n"
    )
    assert rows(source, "python") == [
        ("def f()", ("f",), 1, 6, 0),
        ("class Slow", ("f", "Slow"), 6, 6, 1),
        ("def g()", ("g",), 7, 8, 0),
    ]


JAVASCRIPT = """\
import x from "x";

export function exported(a, b) {
  function helper() {}
  const notTop = () => 1;
  return a + b;
}

export default class Widget extends Base {
  static count = 0;
  onClick = (event) => {
    this.x = event;
  };
  render() {
    return null;
  }
  get size() { return 1; }
}

const arrow = async (x) => {
  return x;
};
export const fn = function () {};
let value = 42;
function* gen() {}
"""


def test_javascript() -> None:
    assert rows(JAVASCRIPT, "javascript") == [
        ("export function exported(a, b)", ("exported",), 3, 7, 0),
        ("function helper()", ("exported", "helper"), 4, 4, 1),
        ("export default class Widget extends Base", ("Widget",), 9, 18, 0),
        ("onClick = (event) =>", ("Widget", "onClick"), 11, 13, 1),
        ("render()", ("Widget", "render"), 14, 16, 1),
        ("get size()", ("Widget", "size"), 17, 17, 1),
        ("const arrow = async (x) =>", ("arrow",), 20, 22, 0),
        ("export const fn = function ()", ("fn",), 23, 23, 0),
        ("function* gen()", ("gen",), 25, 25, 0),
    ]


TYPESCRIPT = """\
export interface Shape {
  area(): number;
  name: string;
}

export type Id = string | number;

enum Color { Red, Green }

@Component({ selector: "x" })
export class Circle implements Shape {
  constructor(private r: number) {}

  @Input()
  @Other()
  area(): number {
    return 3.14 * this.r ** 2;
  }

  private cb = (): void => {};
}

namespace Geo.Util {
  export function dist(a: number): number { return a; }
}

export const make = <T,>(x: T): T => x;
"""


def test_typescript() -> None:
    assert rows(TYPESCRIPT, "typescript") == [
        ("export interface Shape", ("Shape",), 1, 4, 0),
        ("area(): number", ("Shape", "area"), 2, 2, 1),
        ("export type Id = string | number;", ("Id",), 6, 6, 0),
        ("enum Color", ("Color",), 8, 8, 0),
        ("export class Circle implements Shape", ("Circle",), 10, 21, 0),
        ("constructor(private r: number)", ("Circle", "constructor"), 12, 12, 1),
        ("area(): number", ("Circle", "area"), 14, 18, 1),
        ("private cb = (): void =>", ("Circle", "cb"), 20, 20, 1),
        ("namespace Geo.Util", ("Geo", "Util"), 23, 25, 0),
        ("export function dist(a: number): number", ("Geo", "Util", "dist"), 24, 24, 1),
        ("export const make = <T,>(x: T): T =>", ("make",), 27, 27, 0),
    ]


TSX = """\
import React from "react";

type Props = { title: string };

export default function App({ title }: Props): JSX.Element {
  return <div className="app">{title}</div>;
}

export const Button = ({ label }: { label: string }) => (
  <button>{label}</button>
);
"""


def test_tsx() -> None:
    assert rows(TSX, "tsx") == [
        ("type Props = { title: string };", ("Props",), 3, 3, 0),
        ("export default function App({ title }: Props): JSX.Element", ("App",), 5, 7, 0),
        ("export const Button = ({ label }: { label: string }) =>", ("Button",), 9, 11, 0),
    ]


GO = """\
package server

import "context"

type Server struct {
	addr string
}

type (
	Handler interface {
		Serve(ctx context.Context) error
	}
	ID = int64
)

func New(addr string) *Server {
	return &Server{addr: addr}
}

func (s *Server) Run(ctx context.Context) error {
	return nil
}

func (l List[T]) Len() int { return 0 }
"""


def test_go() -> None:
    assert rows(GO, "go") == [
        ("type Server struct", ("Server",), 5, 7, 0),
        ("Handler interface", ("Handler",), 10, 12, 0),
        ("ID = int64", ("ID",), 13, 13, 0),
        ("func New(addr string) *Server", ("New",), 16, 18, 0),
        ("func (s *Server) Run(ctx context.Context) error", ("Server", "Run"), 20, 22, 0),
        ("func (l List[T]) Len() int", ("List", "Len"), 24, 24, 0),
    ]


RUST = """\
use std::fmt;

/// A point.
#[derive(Debug, Clone)]
#[allow(dead_code)]
pub struct Point<T> {
    x: T,
}

pub enum Shape { Circle(f64), Square(f64) }

pub trait Area {
    fn area(&self) -> f64;
}

impl<T: fmt::Display> fmt::Display for Point<T> {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.x)
    }
}

mod tests {
    #[test]
    fn works() {}
}

type Pair = (i32, i32);

macro_rules! square {
    ($x:expr) => { $x * $x };
}
"""


def test_rust() -> None:
    assert rows(RUST, "rust") == [
        ("pub struct Point<T>", ("Point",), 4, 8, 0),
        ("pub enum Shape", ("Shape",), 10, 10, 0),
        ("pub trait Area", ("Area",), 12, 14, 0),
        ("fn area(&self) -> f64;", ("Area", "area"), 13, 13, 1),
        ("impl<T: fmt::Display> fmt::Display for Point<T>", ("Point",), 16, 21, 0),
        (
            "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result",
            ("Point", "fmt"),
            17,
            20,
            1,
        ),
        ("mod tests", ("tests",), 23, 26, 0),
        ("fn works()", ("tests", "works"), 24, 25, 1),
        ("type Pair = (i32, i32);", ("Pair",), 28, 28, 0),
        ("macro_rules! square", ("square",), 30, 32, 0),
    ]


JAVA = """\
package demo;

@Entity
public class Account extends Base implements Comparable<Account> {
    private int id;

    public Account(int id) { this.id = id; }

    @Override
    @SuppressWarnings("unchecked")
    public int compareTo(Account other) {
        return 0;
    }

    static class Builder {
        Builder id(int id) { return this; }
    }

    enum Kind { A, B; boolean isA() { return this == A; } }
}

interface Repo {
    Account find(int id);
}
"""


def test_java() -> None:
    assert rows(JAVA, "java") == [
        ("public class Account extends Base implements Comparable<Account>", ("Account",), 3, 20, 0),
        ("public Account(int id)", ("Account", "Account"), 7, 7, 1),
        ("public int compareTo(Account other)", ("Account", "compareTo"), 9, 13, 1),
        ("static class Builder", ("Account", "Builder"), 15, 17, 1),
        ("Builder id(int id)", ("Account", "Builder", "id"), 16, 16, 2),
        ("enum Kind", ("Account", "Kind"), 19, 19, 1),
        ("boolean isA()", ("Account", "Kind", "isA"), 19, 19, 2),
        ("interface Repo", ("Repo",), 22, 24, 0),
        ("Account find(int id);", ("Repo", "find"), 23, 23, 1),
    ]


C = """\
#include <stdio.h>

struct point {
    int x, y;
};

typedef struct {
    int a;
} pair_t;

enum color { RED, GREEN };

static int *
make(int n)
{
    return 0;
}

#ifdef HAVE_MAIN
int main(int argc, char **argv) { return 0; }
#endif

struct point *declared_only(void);
"""


def test_c() -> None:
    assert rows(C, "c") == [
        ("struct point", ("point",), 3, 5, 0),
        ("typedef struct … pair_t", ("pair_t",), 7, 9, 0),
        ("enum color", ("color",), 11, 11, 0),
        ("make(int n)", ("make",), 13, 17, 0),
        ("int main(int argc, char **argv)", ("main",), 20, 20, 0),
    ]


CPP = """\
#include <vector>

namespace geo {

class Shape {
public:
    virtual ~Shape() = default;
    double area() const { return 0; }
    struct Box { int w; };
};

}  // namespace geo

double geo::Shape::perimeter() const {
    return 0;
}

template <typename T>
T Stack<T>::pop() {
    return T();
}

namespace {
void hidden() {}
}

using Points = std::vector<int>;
"""


def test_cpp() -> None:
    assert rows(CPP, "cpp") == [
        ("namespace geo", ("geo",), 3, 12, 0),
        ("class Shape", ("geo", "Shape"), 5, 10, 1),
        ("virtual ~Shape() = default;", ("geo", "Shape", "~Shape"), 7, 7, 2),
        ("double area() const", ("geo", "Shape", "area"), 8, 8, 2),
        ("struct Box", ("geo", "Shape", "Box"), 9, 9, 2),
        ("double geo::Shape::perimeter() const", ("geo", "Shape", "perimeter"), 14, 16, 0),
        ("T Stack<T>::pop()", ("Stack", "pop"), 18, 21, 0),
        ("void hidden()", ("hidden",), 24, 24, 0),
        ("using Points = std::vector<int>;", ("Points",), 27, 27, 0),
    ]


RUBY = """\
module Shop
  class Cart < Base
    attr_reader :items

    def initialize(items = [])
      @items = items
    end

    def self.empty
      new
    end

    class << self
      def build; end
    end

    class Item
      def price; 0; end
    end
  end
end

class Shop::Order
end
"""


def test_ruby() -> None:
    assert rows(RUBY, "ruby") == [
        ("module Shop", ("Shop",), 1, 21, 0),
        ("class Cart < Base", ("Shop", "Cart"), 2, 20, 1),
        ("def initialize(items = [])", ("Shop", "Cart", "initialize"), 5, 7, 2),
        ("def self.empty", ("Shop", "Cart", "empty"), 9, 11, 2),
        ("def build; end", ("Shop", "Cart", "build"), 14, 14, 2),
        ("class Item", ("Shop", "Cart", "Item"), 17, 19, 2),
        ("def price; 0; end", ("Shop", "Cart", "Item", "price"), 18, 18, 3),
        ("class Shop::Order", ("Shop", "Order"), 23, 24, 0),
    ]


BASH = """\
#!/usr/bin/env bash
set -euo pipefail

log() {
  echo "$@" >&2
}

function main {
  log start
}

if [[ -n "${DEBUG:-}" ]]; then
  debug() { set -x; }
fi

main "$@"
"""


def test_bash() -> None:
    assert rows(BASH, "bash") == [
        ("log()", ("log",), 4, 6, 0),
        ("function main", ("main",), 8, 10, 0),
        ("debug()", ("debug",), 13, 13, 0),
    ]


EXTRA_LANGUAGES = {
    "kotlin": (
        "package p\n"
        "@Serializable\n"
        "data class User(val name: String) : Base() {\n"
        "    @JvmStatic\n"
        "    fun greet(x: Int): String { return name }\n"
        "    companion object { fun make() = User(\"\") }\n"
        "}\n"
        "fun top() = 1\n",
        [
            ("data class User(val name: String) : Base()", ("User",), 2, 7, 0),
            ("fun greet(x: Int): String", ("User", "greet"), 4, 5, 1),
            ("companion object", ("User", "Companion"), 6, 6, 1),
            ("fun make()", ("User", "Companion", "make"), 6, 6, 2),
            ("fun top()", ("top",), 8, 8, 0),
        ],
    ),
    "swift": (
        "@objc\n"
        "public class View: UIView {\n"
        "    init(frame: CGRect) { }\n"
        "    func tap(_ s: Any) -> Bool { true }\n"
        "}\n"
        "extension View: Proto { func area() -> Double { 0 } }\n",
        [
            ("public class View: UIView", ("View",), 1, 5, 0),
            ("init(frame: CGRect)", ("View", "init"), 3, 3, 1),
            ("func tap(_ s: Any) -> Bool", ("View", "tap"), 4, 4, 1),
            ("extension View: Proto", ("View",), 6, 6, 0),
            ("func area() -> Double", ("View", "area"), 6, 6, 1),
        ],
    ),
    "csharp": (
        "namespace App.Core {\n"
        "    [Serializable]\n"
        "    public class User {\n"
        "        public string Greet(int x) => \"\";\n"
        "        public int Age { get; set; }\n"
        "        ~User() {}\n"
        "    }\n"
        "}\n",
        [
            ("namespace App.Core", ("App", "Core"), 1, 8, 0),
            ("public class User", ("App", "Core", "User"), 2, 7, 1),
            ("public string Greet(int x)", ("App", "Core", "User", "Greet"), 4, 4, 2),
            ("public int Age", ("App", "Core", "User", "Age"), 5, 5, 2),
            ("~User()", ("App", "Core", "User", "~User"), 6, 6, 2),
        ],
    ),
    "php": (
        "<?php\n"
        "namespace App\\Models;\n"
        "#[Attr]\n"
        "final class User extends Model {\n"
        "    public function save(array $a): bool { return true; }\n"
        "}\n"
        "function helper($x) { return $x; }\n",
        [
            ("namespace App\\Models;", ("App", "Models"), 2, 2, 0),
            ("final class User extends Model", ("User",), 3, 6, 0),
            ("public function save(array $a): bool", ("User", "save"), 5, 5, 1),
            ("function helper($x)", ("helper",), 7, 7, 0),
        ],
    ),
    "scala": (
        "case class User(name: String) extends Base {\n"
        "  def greet(x: Int): String =\n"
        "    name\n"
        "}\n"
        "object User { def apply(): User = ??? }\n"
        "trait Shape { def area: Double }\n",
        [
            ("case class User(name: String) extends Base", ("User",), 1, 4, 0),
            ("def greet(x: Int): String", ("User", "greet"), 2, 3, 1),
            ("object User", ("User",), 5, 5, 0),
            ("def apply(): User", ("User", "apply"), 5, 5, 1),
            ("trait Shape", ("Shape",), 6, 6, 0),
            ("def area: Double", ("Shape", "area"), 6, 6, 1),
        ],
    ),
    "lua": (
        "local M = {}\n"
        "function M.new(x)\n"
        "  return x\n"
        "end\n"
        "function M:method(a) return a end\n"
        "local function helper() end\n",
        [
            ("function M.new(x)", ("M", "new"), 2, 4, 0),
            ("function M:method(a)", ("M", "method"), 5, 5, 0),
            ("local function helper() end", ("helper",), 6, 6, 0),
        ],
    ),
}


@pytest.mark.parametrize("language", sorted(EXTRA_LANGUAGES))
def test_extra_languages(language: str) -> None:
    source, expected = EXTRA_LANGUAGES[language]
    assert rows(source, language) == expected


def test_label_is_cut_at_max_label_chars() -> None:
    source = "def f(" + ", ".join(f"a{i}" for i in range(160)) + "): pass\n"
    (label, *_), = rows(source, "python")
    assert len(label) == MAX_LABEL
    assert label.endswith("…")
    assert label.startswith("def f(a0, a1")


def test_crlf_and_invalid_utf8_in_labels() -> None:
    source = b"class A:\r\n    def f\xff(self):\r\n        pass\r\n"
    outline = outline_code(source, "python")
    assert outline is not None
    assert [(e.label, e.start, e.end) for e in outline.entries] == [
        ("class A", 1, 3),
        ("def f\ufffd(self)", 2, 3),
    ]


@pytest.mark.parametrize("language", sorted(SPECS))
def test_garbage_never_raises(language: str) -> None:
    rng = random.Random(language)
    blobs = [
        b"",
        bytes(rng.randrange(1, 256) for _ in range(4000)),
        b"def class fn func struct impl {{{{ (((( \xff\xfe" * 50,
        b"}" * 500 + b"{" * 500,
        b"\n" * 50 + b"\r\r\r",
    ]
    for blob in blobs:
        outline = outline_code(blob, language)
        assert isinstance(outline, Outline)
        assert outline.kind == f"code:{language}"
        for entry in outline.entries:
            assert 1 <= entry.start <= entry.end
            assert entry.path and all(entry.path)


def test_binary_data_is_not_parsed() -> None:
    outline = outline_code(b"def f():\n    pass\n\x00\x01\x02", "python")
    assert outline == Outline(
        kind="code:python", notes=("binary data (NUL bytes), not parsed",), indent=True
    )


def test_deep_nesting_does_not_overflow() -> None:
    source = "".join("    " * i + "if x:\n" for i in range(400)) + "    " * 400 + "def f(): pass\n"
    assert isinstance(outline_code(source.encode(), "python"), Outline)


def test_unknown_language() -> None:
    assert outline_code(b"x", "no-such-language") is None
    assert outline_code(b"x", "markdown") is None


def test_deterministic() -> None:
    first = outline_code(CPP.encode(), "cpp")
    assert first == outline_code(CPP.encode(), "cpp")


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b/mod.py", "python"),
        ("stubs.pyi", "python"),
        ("x.js", "javascript"),
        ("x.mjs", "javascript"),
        ("x.cjs", "javascript"),
        ("x.jsx", "javascript"),
        ("x.ts", "typescript"),
        ("x.tsx", "tsx"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("A.java", "java"),
        ("x.c", "c"),
        ("x.h", "cpp"),
        ("x.cc", "cpp"),
        ("X.CPP", "cpp"),
        ("x.cxx", "cpp"),
        ("x.hpp", "cpp"),
        ("x.hh", "cpp"),
        ("x.rb", "ruby"),
        ("Rakefile", "ruby"),
        ("x.sh", "bash"),
        ("x.bash", "bash"),
        ("x.zsh", "bash"),
        ("x.kt", "kotlin"),
        ("x.swift", "swift"),
        ("x.cs", "csharp"),
        ("x.php", "php"),
        ("x.scala", "scala"),
        ("x.lua", "lua"),
        ("README.md", None),
        ("Makefile", None),
        ("noext", None),
        ("archive.tar.gz", None),
    ],
)
def test_language_for(path: str, language: str | None) -> None:
    assert language_for(path) == language


def test_every_mapped_language_has_a_spec() -> None:
    extensions = ["py", "js", "ts", "tsx", "go", "rs", "java", "c", "cpp", "rb", "sh"]
    extensions += ["kt", "swift", "cs", "php", "scala", "lua"]
    for ext in extensions:
        language = language_for(f"f.{ext}")
        assert language in SPECS
        assert outline_code(b"", language) == Outline(kind=f"code:{language}")
