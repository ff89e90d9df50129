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


# A dependabot.yml: its groups, directory and cooldown say what they do there, not in any YAML file.
_DEPENDABOT = r"dependabot|package-ecosystem"
# Any file but Python source: a config's ``select =`` or ``omit =`` is a Python file's assignment too.
_NOT_PYTHON = r"^(?!.*\.pyi?$)"
# where a bare 3.x is a Python: a tox factor, a CI matrix entry (not a requirements file's or a compose file's)
_PY_FILES = (r"tox\.ini$|noxfile\.py$|pyproject\.toml$|setup\.(?:cfg|py)$|\.github/|\.circleci/|"
             r"(?:\.gitlab-ci|\.travis|appveyor|azure-pipelines|\.readthedocs)\.ya?ml$")
_CI_FILES = r"\.github/|\.circleci/|(?:\.gitlab-ci|\.travis|appveyor|azure-pipelines)\.ya?ml$"
_PYTEST = r"\bpytest\b|\bpy\.test\b|\bxdist\b"  # where -x and -n are pytest's (bash -x traces, head -n counts)
IDIOMS: tuple[Idiom, ...] = (
    # GitHub Actions and other CI
    _idiom(r"\bfail-fast:\s*false\b", "a failure does not stop or cancel the rest; the others keep running, every "
           "combination, entry continues"),
    _idiom(r"\bfail-fast:\s*true\b", "a failing job cancels the other jobs, stops the rest"),
    _idiom(r"^\s*needs:", "runs only after, once finished, waits for, depends on"),
    _idiom(r"\bruns-on:", "runs on the runner, machine, operating system"),
    _idiom(r"\bworkflow_dispatch\b", "started manually, by hand, on demand"),
    # an event starts it by itself: beside workflow_dispatch, "runs automatically on push" is no opposite of it
    # GitHub's events only: GitLab's release: makes a release, and push: or release: is a key of many a YAML file
    _idiom(r"^\s*(?:-\s*)?(?:push|pull_request(?:_target)?|release|merge_group):"
           r"|^\s*on:\s*\[?\s*(?:push|pull_request)\b", "runs automatically", path=r"\.github/workflows/"),
    _idiom(r"^\s*(?:-\s*)?(?:schedule|cron):", "scheduled, on a schedule, periodically"),
    _idiom(r"\bfetch-depth:\s*['\"]?0\b", "full history, all commits and tags"),
    _idiom(r"\bpersist-credentials:\s*false\b", "the token is not kept in the git config, credentials not persisted"),
    _idiom(r"\bcontinue-on-error:\s*true\b", "a failure does not fail the job or the workflow run, allowed to fail"),
    _idiom(r"\btimeout-minutes:", "timeout, time limit"),
    _idiom(r"\bcancel-in-progress:\s*true\b", "a new run cancels the run in progress, the previous, superseded run"),
    _idiom(r"^\s*permissions:\s*\{\s*\}", "no permissions at all, none granted", path=_CI_FILES),
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
    # possessive: "\s*" twice around an optional "${{" split a run of spaces after "if:" every way (7 s for
    # 120 lines of 2,000 characters)
    _idiom(r"\bif:\s*+(?:\$?\{\{\s*+)?always\(\)", "always runs, even when earlier steps or jobs failed"),
    _idiom(r"\bif:\s*+(?:\$?\{\{\s*+)?failure\(\)", "runs only when a step failed"),
    # anchored: one start per line; not beside "||" or under "!(": then it runs elsewhere too
    _idiom(r"^\s*(?:-\s*)?if:(?![^\n]*(?:\|\||!\s*\())[^\n]{0,200}?\bgithub\.repository\s*==",
           "runs only in that repository, not in forks"),
    _idiom(r"\bworkflow_call\b", "reusable workflow, called by other workflows"),
    _idiom(r"\bmerge_group\b", "merge queue"),
    _idiom(r"\ballow-prereleases:\s*true\b", "pre-release python versions allowed"),
    _idiom(r"\bsetup-uv\b", "installs uv"),
    _idiom(r"\bcodecov/codecov-action\b", "uploads coverage to codecov"),
    _idiom(r"\bretention-days:", "kept for days, retention"),
    _idiom(r"\bif-no-files-found:\s*error\b", "fails when no files are found"),
    _idiom(r"\bmax-parallel:", "at most in parallel at once"),
    _idiom(r"\bopen-pull-requests-limit:", "at most, limit of open pull requests"),
    _idiom(r"^\s*groups:", "grouped together into one pull request", _DEPENDABOT),
    _idiom(r"^\s*directory:\s*['\"]?/['\"]?\s*$", "the repository root", _DEPENDABOT),
    _idiom(r"\bcommit-message:", "commit message prefix", _DEPENDABOT),
    _idiom(r"\bcooldown:|\bdefault-days:", "waits days before updating, cooldown", _DEPENDABOT),
    # tox, pytest, coverage, sphinx, pip
    _idiom(r"\s-W\b", "warnings are errors, treats warnings as errors, fails", also=r"\bsphinx-build\b", flags=0),
    _idiom(r"\s-W\s*error\b", "warnings are errors, treats warnings as errors, fails", flags=0),  # python -W error
    _idiom(r"\bjunit_family\b", "the junit xml report format"),
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
    _idiom(r"\bpass_?env\b", "passes environment variables through from the outside environment"),
    _idiom(r"\bset_?env\b", "sets environment variables"),
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
    _idiom(r"^\s*depends\s*=", "runs after, depends on", path=_NOT_PYTHON),
    _idiom(r"\bparallel_show_output\b", "shows output when run in parallel"),
    _idiom(r"\b(?:allowlist|whitelist)_externals\b", "allows external commands"),
    _idiom(r"^\s*extras\s*=", "installs extras, optional dependencies", path=_NOT_PYTHON),
    _idiom(r"^\s*labels\s*=", "label groups environments", path=_NOT_PYTHON),
    _idiom(r"\bisolated_build\s*=\s*true\b", "isolated build"),
    _idiom(r"^\s*commands_pre\s*=", "runs before the commands", path=_NOT_PYTHON),
    _idiom(r"^\s*package\s*=\s*wheel\b", "installs from a wheel", path=_NOT_PYTHON),
    _idiom(r"^\s*(?:min_version|minversion)\s*=", "requires at least, minimum version", path=_NOT_PYTHON),
    _idiom(r"^\s*addopts\s*=", "default options, arguments always passed", path=_NOT_PYTHON),
    _idiom(r"^\s*testpaths\s*=", "looks for tests in, test folders", path=_NOT_PYTHON),
    _idiom(r"^\s*filterwarnings\s*=", "filters warnings", path=_NOT_PYTHON),  # ignore::X, default::X as well as error
    # its "error" entry (not "error::SomeWarning", which makes one kind an error)
    _idiom(r"^\s*(?:filterwarnings\s*=\s*)?(?:\[\s*)?['\"]?error['\"]?\s*(?:,|\]|$)", "warnings are errors",
           r"filterwarnings"),
    _idiom(r"\bxfail_strict\s*=\s*true\b", "strict xfail, unexpected passes fail"),
    _idiom(r"^\s*branch\s*=\s*true\b", "branch coverage", path=_NOT_PYTHON),
    _idiom(r"^\s*parallel\s*=\s*true\b", "parallel, a separate data file for each process", path=_NOT_PYTHON),
    _idiom(r"^\s*omit\s*=", "omits, leaves out, excludes", path=_NOT_PYTHON),
    _idiom(r"\bshow_missing\s*=\s*true\b", "shows missing lines"),
    _idiom(r"\bskip_covered\s*=\s*true\b", "skips fully covered files"),
    _idiom(r"\bfail_under\s*=", "fails below, minimum coverage"),
    _idiom(r"\bexclude_(?:lines|also)\s*=", "excludes lines from coverage"),
    _idiom(r"^\s*strict\s*=\s*true\b", "strict checking", path=_NOT_PYTHON),
    _idiom(r"\bignore_missing_imports\s*=\s*true\b", "ignores missing imports"),
    _idiom(r"\bdisallow_untyped_defs\s*=\s*true\b", "requires type annotations, untyped functions refused"),
    _idiom(r"\bwarn_unused_ignores\s*=\s*true\b", "warns about unused ignores"),
    _idiom(r"^\s*line-length\s*=", "maximum line length", path=_NOT_PYTHON),
    _idiom(r"^\s*target-version\s*=", "targets python version", path=_NOT_PYTHON),
    _idiom(r"^\s*(?:extend-)?select\s*=", "enables, selects rules", path=_NOT_PYTHON),
    _idiom(r"^\s*(?:extend-)?ignore\s*=", "ignores, disables rules", path=_NOT_PYTHON),
    _idiom(r"\bper-file-ignores\b", "ignores rules in some files"),
    _idiom(r"^\s*build-backend\s*=", "build backend, built with", path=_NOT_PYTHON),
    _idiom(r"^\s*dynamic\s*=", "dynamic, filled in by the build backend at build time", path=_NOT_PYTHON),
    _idiom(r"\[project\.optional-dependencies\]|\[tool\.poetry\.extras\]", "optional dependencies, extras"),
    _idiom(r"\[project\.urls\]|\[tool\.poetry\.urls\]", "links, urls"),
    _idiom(r"^\s*readme\s*=", "readme, long description", path=_NOT_PYTHON),
    _idiom(r"\[tool\.towncrier\]", "changelog fragments, news fragments"),
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
    _idiom(r"\\(?:033|x1b|e|u001b)\[", "ansi escape code, sequence"),  # written in a string: \033[91m
    _idiom(r"\bgit log -1\b", "the last, latest commit"),
    _idiom(r"\bgit log\b", "commit timestamp, time, date", also=r"%[ca]t\b"),
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
    _idiom(r"@dataclass\b", "data class"),
    _idiom(r"^\s*(?:el)?if\s+(?:typing\.)?TYPE_CHECKING\s*:",
           "only for type checkers, imported only when type checking", flags=0),
    _idiom(r"__name__\s*==\s*['\"]__main__['\"]", "run as a script, main"),
    _idiom(r"^\s*__all__\s*=", "exports only the listed public names", flags=0),
    _idiom(r"\bsys\.version_info\b", "python version check"),
    _idiom(r"^\s*raise\s+NotImplementedError\s*(?:\(\s*\))?\s*$|@(?:abc\.)?abstractmethod\b",
           "abstract, subclasses must implement", flags=0),
    # a statement, as "except" above ("\s+" then "\(?\s*" split a run of spaces every way, from every "except")
    _idiom(r"^\s*except\s*+\(?\s*+(?:ImportError|ModuleNotFoundError)\b", "optional import, falls back when missing",
           flags=0),
    _idiom(r"\blogging\.getLogger\b", "logger, logs"),
    _idiom(r"\bsorted\(|\.sort\(", "sorted, sorts, order", flags=0),
    _idiom(r"\breversed\(|\[::-1\]", "reversed, reverse order", flags=0),
    _idiom(r"\{[^{}]{0,80}:\.1f\}|%\.1f", "one decimal place", flags=0),
    _idiom(r"\{[^{}]{0,80}:,d?\}", "thousands separators, commas", flags=0),
    _idiom(r"\bround\(", "rounds, rounded", flags=0),
    _idiom(r"^\s*for\s+\w+(?:\s*,\s*\w+)*\s+in\b", "loops over, iterates, each", flags=0),
    _idiom(r"\bisinstance\(", "type check, checks the type", flags=0),
    _idiom(r"\bdef \w+\(self\b", "method", flags=0),
    _idiom(r"@(?:typing\.)?overload\b", "overloads, typing signatures", flags=0),
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
    _idiom(r"(?<![\w.:@/<>=~!-])(?<![<>=~!]\s)(?<!pypy\s)3\.1?\d\b", "python, cpython", path=_PY_FILES),  # not pypy 3.10
    # environment markers and variables of Python itself
    _idiom(r"['\"]win32['\"]|\bos\.name\s*[!=]=\s*['\"]nt['\"]", "windows"),
    _idiom(r"['\"]darwin['\"]", "macos, mac"),
    _idiom(r"\bPYTHONDONTWRITEBYTECODE\b", "python writes no bytecode, no .pyc files", flags=0),
    _idiom(r"\bPYTHONUNBUFFERED\b", "unbuffered output", flags=0),
    # documentation
    _idiom(r"\brtd\b|\breadthedocs\b", "read the docs"),
    _idiom(r"\brst\b|\.rst\b", "restructuredtext"),
    _idiom(r"^\s*(?:-\s*)?files:", "only files matching", path=r"pre-commit"),  # pre-commit's filter
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
