"""What common lines of CI, packaging, test and Python files mean, in the words a summary uses.

A model that reads ``fail-fast: false`` writes "one failing job leaves the others running"; one
that reads ``sphinx-build -W`` writes "warnings are errors". Neither sentence shares enough words
with its line for a word-by-word check, so each idiom here is a pattern on one cited line and the
words it says: the reading (reading.py) takes them in as if the line held them, and a statement
of that line carries them, so a gloss that says no (``--assert=plain``: no assertion rewriting)
bears on polarity as the line does. A gloss names what the line does, never a fact beyond it: it
adds no number, and no name but the tool's the line belongs to (xdist for ``-n auto`` beside pytest,
Python for a bare ``3.13`` in a tox file), which then counts as said. A pattern that would match
a line of another tool or of prose (bash's ``-x``, a package's ``>=3.1``, "raise an issue") is
narrowed by case, by a context the cited text must hold (``where``) or by the kind of file (``path``).

The table is general knowledge of these formats, written from their documentation, not from any
labelled sentence; docs/summaries.md says how it is measured.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Idiom:
    line: re.Pattern[str]  # searched in one cited line
    says: str  # the words it says, as a short phrase: a "no" in it is a negation with its scope
    also: re.Pattern[str] | None = None  # searched in the same line too: two searches, never one ``a.*b``,
    #   which retried from every ``a`` of a long line takes time quadratic in its length
    where: re.Pattern[str] | None = None  # searched in all cited text (with the lines above it): its context
    path: re.Pattern[str] | None = None  # searched in the file's path: the kind of file it needs


def _idiom(line: str, says: str, where: str | None = None, flags: int = re.IGNORECASE, also: str | None = None,
           path: str | None = None) -> Idiom:
    return Idiom(re.compile(line, flags), says, re.compile(also, flags) if also else None,
                 re.compile(where, re.IGNORECASE) if where else None, re.compile(path, re.IGNORECASE) if path else None)


# where a bare 3.x is a Python: a tox factor, a CI matrix entry (not a requirements file's or a compose file's)
_PY_FILES = (r"tox\.ini$|noxfile\.py$|pyproject\.toml$|setup\.(?:cfg|py)$|\.github/|\.circleci/|"
             r"(?:\.gitlab-ci|\.travis|appveyor|azure-pipelines|\.readthedocs)\.ya?ml$")
_CI_FILES = r"\.github/|\.circleci/|(?:\.gitlab-ci|\.travis|appveyor|azure-pipelines)\.ya?ml$"
_PYTEST = r"\bpytest\b|\bpy\.test\b|\bxdist\b"  # where -x and -n are pytest's (bash -x traces, head -n counts)
IDIOMS: tuple[Idiom, ...] = (
    # GitHub Actions and other CI
    _idiom(r"\bfail-fast:\s*false\b", "failing jobs leave the other jobs running; every combination, entry continues"),
    _idiom(r"\bfail-fast:\s*true\b", "a failing job cancels the other jobs, stops the rest"),
    _idiom(r"^\s*needs:", "runs only after, once finished, waits for, depends on"),
    _idiom(r"\bruns-on:", "runs on the runner, machine, operating system"),
    _idiom(r"\bworkflow_dispatch\b", "started manually, by hand, on demand"),
    # an event starts it by itself: beside workflow_dispatch, "runs automatically on push" is no opposite of it
    _idiom(r"^\s*(?:-\s*)?(?:push|pull_request(?:_target)?|release|merge_group):"
           r"|^\s*on:\s*\[?\s*(?:push|pull_request)\b", "runs automatically"),
    _idiom(r"^\s*(?:-\s*)?(?:schedule|cron):", "scheduled, on a schedule, periodically"),
    _idiom(r"\bfetch-depth:\s*['\"]?0\b", "full history, all commits and tags"),
    _idiom(r"\bpersist-credentials:\s*false\b", "the token is not kept in the git config, credentials not persisted"),
    _idiom(r"\bcontinue-on-error:\s*true\b", "a failure does not fail the job or the workflow run, allowed to fail"),
    _idiom(r"\btimeout-minutes:", "timeout, time limit"),
    _idiom(r"\bcancel-in-progress:\s*true\b", "a new run cancels the run in progress, the previous, superseded run"),
    _idiom(r"\bid-token:\s*write\b", "oidc id token"),  # for PyPI's trusted publishing, or a cloud's login
    _idiom(r"\bcontents:\s*read\b", "read-only access"),
    _idiom(r"\bactions/checkout\b", "checks out, clones the repository, code"),
    _idiom(r"\bactions/setup-python\b", "sets up, installs python"),
    _idiom(r"\bactions/cache\b|\bcache:\s*['\"]?pip\b", "caches, cached between runs"),
    _idiom(r"\bgh-action-pypi-publish\b|\btwine upload\b", "publishes, uploads, releases to pypi"),
    _idiom(r"refs/tags\b", "tag, tags, tagged release"),
    _idiom(r"^\s*tags:", "tag, tags, tagged release", path=_CI_FILES),  # not OpenAPI's, mkdocs' or docker's tags
    _idiom(r"\bmatrix\b", "matrix combination, entry, variant"),
    _idiom(r"^\s*on:", "triggered by, runs on"),
    _idiom(r"\battest", "attestation, provenance"),
    _idiom(r"\brequire_ci_to_pass:\s*(?:no|false)\b", "reports regardless of failing ci, never waits"),
    _idiom(r"\binformational:\s*true\b", "informational, never fails, no failing status"),
    _idiom(r"\bfail_on_warning:\s*true\b", "warnings are errors, fails on warnings"),
    # tox, pytest, coverage, sphinx, pip
    _idiom(r"\s-W\b", "warnings are errors, treats warnings as errors, fails", also=r"\bsphinx-build\b", flags=0),
    _idiom(r"\s-W\s*error\b", "warnings are errors, treats warnings as errors, fails", flags=0),  # python -W error
    _idiom(r"--keep-going\b", "keeps going, continues past errors"),
    _idiom(r"(?<![\w-])-x\b|--exitfirst\b", "stops at the first failure", _PYTEST, flags=0),
    _idiom(r"(?<![\w-])-n\s*(?:auto|\d+)\b|--numprocesses\b", "parallel, workers, processes, xdist", _PYTEST, flags=0),
    _idiom(r"--cov\b|\bcoverage run\b", "coverage, measures"),
    _idiom(r"--source\b", "measures the source, coverage of", "coverage"),  # not gcloud's nor twine's --source
    _idiom(r"--append\b", "appends, adds to the data, combines"),
    _idiom(r"\bcoverage combine\b", "combines, merges the data"),
    _idiom(r"--fail-under\b", "fails below, minimum threshold"),
    _idiom(r"--assert=plain\b", "plain asserts, no assertion rewriting"),
    _idiom(r"(?<![\w-])-p\s*no:", "disables the plugin"),
    _idiom(r"--strict-markers\b", "unknown markers are errors, strict"),
    _idiom(r"\busedevelop\s*=\s*true\b|(?<![\w-])-e\s+\.|--editable\b", "editable, develop mode install"),
    _idiom(r"\bskip_install\s*=\s*true\b|^\s*package\s*=\s*skip\b", "without installing the package, skips install"),
    _idiom(r"\bpassenv\b", "passes environment variables through"),
    _idiom(r"\bsetenv\b", "sets environment variables"),
    _idiom(r"^\s*deps\s*=", "dependencies installed, requirements"),
    # -r only after a space, quote, bracket or comma and its file name never across one: a run of "/-r/-r"
    # is not a start at every "-r" with a scan to the run's end from each
    _idiom(r"(?:^|(?<=[\s\"'\[,]))-r\s*+[^\s\"'\[\],]+\.txt\b|--requirement\b", "installs the requirements file"),
    _idiom(r"--upgrade\b|(?<![\w-])-U\b", "upgrades to the latest", flags=0),  # python -u, set -u: not -U
    _idiom(r"\bgit\+(?:https?|ssh)://", "installs straight from the git repository, source"),
    _idiom(r"@(?:main|master)\b", "main branch"),
    _idiom(r"\bvenv\b|\bvirtualenv\b", "virtual environment, virtualenv"),
    _idiom(r"\bbin/activate\b", "activates the virtual environment"),
    _idiom(r"\{posargs", "extra command-line arguments passed"),
    _idiom(r"\{envsitepackagesdir\}", "installed package, site-packages"),
    _idiom(r"\{toxinidir\}", "project root folder"),
    _idiom(r"^\s*(?:-\s*)?path:\s*['\"]?\.['\"]?\s*$", "the repository root, project root folder"),
    _idiom(r"^\s*(?:-\s*)?method:\s*pip\b", "installs the package with pip"),
    _idiom(r"^\s*envlist\b|^\s*env_list\b", "environments run by default"),
    # pre-commit and linters
    # pyproject-fmt, gofmt, cargo fmt; not Go's fmt package ("fmt", fmt.Println) nor a format string (fmt=)
    _idiom(r"-fmt\b|(?<![\w\"'])(?:go|rust|sh)?fmt\b(?![.:(\"'=])", "formats, formatter, formatting"),
    _idiom(r"\bid:\s*ruff(?:-check)?\s*$", "lints, linter, checks the code"),
    _idiom(r"\bid:\s*ruff-format\b", "formats, formatter"),
    _idiom(r"--fix\b|^\s*fix\s*=\s*true\b", "applies fixes, fixes automatically"),
    _idiom(r"--unsafe-fixes\b", "unsafe fixes included"),
    _idiom(r"--exit-non-zero-on-fix\b", "exits non-zero, fails when it fixed, changed something"),
    _idiom(r"\bautoupdate_schedule\b", "updates the hooks on a schedule, pre-commit.ci"),
    _idiom(r"--ignore-words-list\b|\bignore-words\b|^\s*+(?:args:\s*+)?\[?\s*+['\"]?-L\b", "ignores words", "codespell",
           flags=0),
    _idiom(r"\bend-of-file-fixer\b", "ensures files end in a newline"),
    _idiom(r"\btrailing-whitespace\b", "strips, removes trailing whitespace"),
    _idiom(r"\bcheck-(?:yaml|toml|json)\b", "validates, checks the syntax, parses"),
    _idiom(r"\bmypy\b", "type checks, types, typing"),
    # Python code
    _idiom(r"^\s*class\s+\w+\(\s*[\w.]++(?!\s*=)", "subclass, inherits, derives from", flags=0),  # not metaclass=
    _idiom(r"^\s*assert\b", "fails with assertionerror, asserts, checks", flags=0),
    _idiom(r"\bre\.(?:compile|match|search|sub|fullmatch|escape|split|findall)\b", "regex, regular expression"),
    _idiom(r"^\s*raise\b", "raises, fails with an error, exception", flags=0),  # not "raise an issue"
    _idiom(r"\bb(?:\"\"|'')", "empty bytes, bytestring", flags=0),
    _idiom(r"\bos\.sep\b", "the os path separator"),
    _idiom(r"\bos\.altsep\b", "the alternate path separator"),
    _idiom(r"@(?:functools\.)?(?:lru_)?cache\b|@cached_property\b", "cached, computed once, memoized"),
    # a private attribute set on first use; "if timeout is None:" fills in a default, nothing lazy
    _idiom(r"(?<![\w.])(?:(?:self|cls)\.)?_\w+\s+is None\s*:", "lazily, the first time, on first use", flags=0),
    _idiom(r"\bdef __init__\b", "constructor, created, initializes", flags=0),
    _idiom(r"\bdef __(?:enter|exit)__\b", "context manager, with statement", flags=0),
    _idiom(r"^\s*(?:[\w.]+\s*=\s*)?yield\b", "generator, yields", flags=0),  # a statement, not prose's "yields"
    _idiom(r"\basync def\b", "asynchronous coroutine", flags=0),
    _idiom(r"\bwarnings\.warn\b", "warns, warning"),  # of any category: DeprecationWarning says its own words
    _idiom(r"^\s*except\b", "catches, handles the error", flags=0),
    _idiom(r"\bctypes\b", "c library, foreign functions"),
    _idiom(r"\bCDLL\b|\bcdll\.|\bLoadLibrary\b", "loads a c library", flags=0),
    # packaging metadata
    _idiom(r"\brequires-python\b|\bpython_requires\b", "requires, supports python"),
    _idiom(r"\bsdist\b|\.tar\.gz\b", "source distribution, sdist"),
    _idiom(r"\bbdist_wheel\b|\.whl\b", "wheel"),
    _idiom(r"\[project\.scripts\]|\bconsole_scripts\b", "command, entry point, executable"),
    _idiom(r"\b(?:author|maintainer)_email\b|\bemail\s*=|(?<=[\w.+-])(?<!\bgit)@[\w-]+\.[a-z]{2,}\b",
           "contact address, email"),  # not a decorator (@pytest.fixture) nor git@github.com
    _idiom(r"Development Status :: 5\b", "stable, production"),
    _idiom(r"\bpackage-ecosystem\b", "updates dependencies, dependabot"),
    # not a compared or assigned version (Jinja2>=3.1, version = 3.12), nor an image's tag (redis:3.12)
    _idiom(r"(?<![\w.:@/<>=~!-])(?<![<>=~!]\s)3\.1?\d\b", "python", path=_PY_FILES),
)


def glosser(path: str, text: str) -> Callable[[str], list[str]]:
    """What the idioms say of each cited line of the file at ``path`` (``text``: all the cited text, with the
    lines above it). Each idiom's context is searched here once, not once a line: the cited text of a
    minified file is megabytes, and a search of it for each of its lines took time quadratic in it."""
    context = f"{path}\n{text}"
    fit = tuple(i for i in IDIOMS
                if (i.path is None or i.path.search(path)) and (i.where is None or i.where.search(context)))

    def glossed(line: str) -> list[str]:
        return [i.says for i in fit if i.line.search(line) and (i.also is None or i.also.search(line))]

    return glossed


def glossed(line: str, path: str = "", text: str = "") -> list[str]:
    """The phrases the idioms say of one ``line`` of the file at ``path`` among the cited ``text``."""
    return glosser(path, text)(line)
