"""What common lines of CI, packaging, test and Python files mean, in the words a summary uses.

A model that reads ``fail-fast: false`` writes "one failing job leaves the others running"; one
that reads ``sphinx-build -W`` writes "warnings are errors". Neither sentence shares enough words
with its line for a word-by-word check, so each idiom here is a pattern on one cited line and the
words it says: the reading (reading.py) takes them in as if the line held them, and a statement
of that line carries them, so a gloss that says no (``--assert=plain``: no assertion rewriting)
bears on polarity as the line does. A gloss names what the line does, never a fact beyond it:
versions, counts and names still come from the line itself.

The table is general knowledge of these formats, written from their documentation, not from any
labelled sentence; docs/summaries.md says how it is measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Idiom:
    line: re.Pattern[str]  # searched in one cited line
    says: str  # the words it says, as a short phrase: a "no" in it is a negation with its scope
    where: re.Pattern[str] | None = None  # searched in the file's path and all cited text: its context


def _idiom(line: str, says: str, where: str | None = None, flags: int = re.IGNORECASE) -> Idiom:
    return Idiom(re.compile(line, flags), says, re.compile(where, re.IGNORECASE) if where else None)


# A dependabot.yml: its groups, directory and cooldown say what they do there, not in any YAML file.
_DEPENDABOT = r"dependabot|package-ecosystem"
# Any file but Python source: a config's ``select =`` or ``omit =`` is a Python file's assignment too.
# (The context starts with the path, up to its newline.)
_NOT_PYTHON = r"\A(?![^\n]*\.pyi?\n)"
_PY_FILES = r"tox\.ini|noxfile|pyproject\.toml|setup\.(?:cfg|py)|\.github/|\.ya?ml$|requirements|\.py$"
IDIOMS: tuple[Idiom, ...] = (
    # GitHub Actions and other CI
    _idiom(r"\bfail-fast:\s*false\b", "failing jobs leave the other jobs running; every combination, entry continues"),
    _idiom(r"\bfail-fast:\s*true\b", "a failing job cancels the other jobs, stops the rest"),
    _idiom(r"^\s*needs:", "runs only after, once finished, waits for, depends on"),
    _idiom(r"\bruns-on:", "runs on the runner, machine, operating system"),
    _idiom(r"\bworkflow_dispatch\b", "started manually, by hand, on demand"),
    _idiom(r"^\s*(?:-\s*)?(?:schedule|cron):", "scheduled, on a schedule, periodically"),
    _idiom(r"\bfetch-depth:\s*['\"]?0\b", "full history, all commits and tags"),
    _idiom(r"\bpersist-credentials:\s*false\b", "no credentials, token kept"),
    _idiom(r"\bcontinue-on-error:\s*true\b", "failure allowed, tolerated, ignored"),
    _idiom(r"\btimeout-minutes:", "timeout, time limit"),
    _idiom(r"\bcancel-in-progress:\s*true\b", "a new run cancels the run in progress, the previous, superseded run"),
    _idiom(r"\bid-token:\s*write\b", "oidc token, trusted publishing"),
    _idiom(r"\bcontents:\s*read\b", "read-only access"),
    _idiom(r"\bactions/checkout\b", "checks out, clones the repository, code"),
    _idiom(r"\bactions/setup-python\b", "sets up, installs python"),
    _idiom(r"\bactions/cache\b|\bcache:\s*['\"]?pip\b", "caches, cached between runs"),
    _idiom(r"\bgh-action-pypi-publish\b|\btwine upload\b", "publishes, uploads, releases to pypi"),
    _idiom(r"refs/tags\b|\btags:", "tag, tags, tagged release"),
    _idiom(r"\bmatrix\b", "matrix combination, entry, variant"),
    _idiom(r"^\s*on:", "triggered by, runs on"),
    _idiom(r"\battest", "attestation, provenance"),
    _idiom(r"\brequire_ci_to_pass:\s*(?:no|false)\b", "reports regardless of failing ci"),
    _idiom(r"\binformational:\s*true\b", "informational, never fails, no failing status"),
    _idiom(r"\bfail_on_warning:\s*true\b", "warnings are errors, fails on warnings"),
    _idiom(r"\bif:\s*\$?\{?\{?\s*always\(\)", "always runs, even when earlier steps or jobs failed"),
    _idiom(r"\bif:\s*\$?\{?\{?\s*failure\(\)", "runs only when a step failed"),
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
    _idiom(r"\bsphinx-build\b.{0,300}?\s-W\b|\s-W\s+error\b", "warnings are errors, treats warnings as errors, fails"),
    _idiom(r"--keep-going\b", "keeps going, continues past errors"),
    _idiom(r"\s-x\b|--exitfirst\b", "stops at the first failure"),
    _idiom(r"\s-n\s*(?:auto|\d+)\b|--numprocesses\b", "parallel, workers, processes, xdist"),
    _idiom(r"--cov\b|\bcoverage run\b", "coverage, measures"),
    _idiom(r"--source\b", "measures the source, coverage of"),
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
    _idiom(r"(?<![\w-])-r\s*\S+\.txt\b|--requirement\b", "installs the requirements file"),
    _idiom(r"--upgrade\b|(?<![\w-])-U\b", "upgrades to the latest"),
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
    _idiom(r"^\s*depends\s*=", "runs after, depends on", _NOT_PYTHON),
    _idiom(r"\bparallel_show_output\b", "shows output when run in parallel"),
    _idiom(r"\b(?:allowlist|whitelist)_externals\b", "allows external commands"),
    _idiom(r"^\s*extras\s*=", "installs extras, optional dependencies", _NOT_PYTHON),
    _idiom(r"^\s*labels\s*=", "label groups environments", _NOT_PYTHON),
    _idiom(r"\bisolated_build\s*=\s*true\b", "isolated build"),
    _idiom(r"^\s*commands_pre\s*=", "runs before the commands", _NOT_PYTHON),
    _idiom(r"^\s*package\s*=\s*wheel\b", "installs from a wheel", _NOT_PYTHON),
    _idiom(r"^\s*(?:min_version|minversion)\s*=", "requires at least, minimum version", _NOT_PYTHON),
    _idiom(r"^\s*addopts\s*=", "default options, arguments always passed", _NOT_PYTHON),
    _idiom(r"^\s*testpaths\s*=", "looks for tests in, test folders", _NOT_PYTHON),
    _idiom(r"^\s*filterwarnings\s*=", "filters warnings", _NOT_PYTHON),  # ignore::X, default::X as well as error
    # its "error" entry (not "error::SomeWarning", which makes one kind an error)
    _idiom(r"^\s*(?:filterwarnings\s*=\s*)?(?:\[\s*)?['\"]?error['\"]?\s*(?:,|\]|$)", "warnings are errors",
           r"filterwarnings"),
    _idiom(r"\bxfail_strict\s*=\s*true\b", "strict xfail, unexpected passes fail"),
    _idiom(r"^\s*branch\s*=\s*true\b", "branch coverage", _NOT_PYTHON),
    _idiom(r"^\s*parallel\s*=\s*true\b", "parallel, a separate data file for each process", _NOT_PYTHON),
    _idiom(r"^\s*omit\s*=", "omits, leaves out, excludes", _NOT_PYTHON),
    _idiom(r"\bshow_missing\s*=\s*true\b", "shows missing lines"),
    _idiom(r"\bskip_covered\s*=\s*true\b", "skips fully covered files"),
    _idiom(r"\bfail_under\s*=", "fails below, minimum coverage"),
    _idiom(r"\bexclude_(?:lines|also)\s*=", "excludes lines from coverage"),
    _idiom(r"^\s*strict\s*=\s*true\b", "strict checking", _NOT_PYTHON),
    _idiom(r"\bignore_missing_imports\s*=\s*true\b", "ignores missing imports"),
    _idiom(r"\bdisallow_untyped_defs\s*=\s*true\b", "requires type annotations, untyped functions refused"),
    _idiom(r"\bwarn_unused_ignores\s*=\s*true\b", "warns about unused ignores"),
    _idiom(r"^\s*line-length\s*=", "maximum line length", _NOT_PYTHON),
    _idiom(r"^\s*target-version\s*=", "targets python version", _NOT_PYTHON),
    _idiom(r"^\s*(?:extend-)?select\s*=", "enables, selects rules", _NOT_PYTHON),
    _idiom(r"^\s*(?:extend-)?ignore\s*=", "ignores, disables rules", _NOT_PYTHON),
    _idiom(r"\bper-file-ignores\b", "ignores rules in some files"),
    _idiom(r"^\s*build-backend\s*=", "build backend, built with", _NOT_PYTHON),
    _idiom(r"^\s*dynamic\s*=", "dynamic, filled in by the build backend at build time", _NOT_PYTHON),
    _idiom(r"\[project\.optional-dependencies\]|\[tool\.poetry\.extras\]", "optional dependencies, extras"),
    _idiom(r"\[project\.urls\]|\[tool\.poetry\.urls\]", "links, urls"),
    _idiom(r"^\s*readme\s*=", "readme, long description", _NOT_PYTHON),
    _idiom(r"\[tool\.towncrier\]", "changelog fragments, news fragments"),
    # pre-commit and linters
    _idiom(r"fmt\b", "formats, formatter, formatting"),
    _idiom(r"\bid:\s*ruff(?:-check)?\s*$", "lints, linter, checks the code"),
    _idiom(r"\bid:\s*ruff-format\b", "formats, formatter"),
    _idiom(r"--fix\b|^\s*fix\s*=\s*true\b", "applies fixes, fixes automatically"),
    _idiom(r"--unsafe-fixes\b", "unsafe fixes included"),
    _idiom(r"--exit-non-zero-on-fix\b", "exits non-zero, fails when it fixed, changed something"),
    _idiom(r"\bautoupdate_schedule\b", "updates the hooks on a schedule, pre-commit.ci"),
    _idiom(r"--ignore-words-list\b|\bignore-words\b|^\s*+(?:args:\s*+)?\[?\s*+['\"]?-L\b", "ignores words", "codespell"),
    _idiom(r"\bend-of-file-fixer\b", "ensures files end in a newline"),
    _idiom(r"\btrailing-whitespace\b", "strips, removes trailing whitespace"),
    _idiom(r"\bcheck-(?:yaml|toml|json)\b", "validates, checks the syntax, parses"),
    _idiom(r"\bmypy\b", "type checks, types, typing"),
    # Python code
    _idiom(r"^\s*class\s+\w+\(\s*[\w.]+", "subclass, inherits, derives from", flags=0),
    _idiom(r"^\s*assert\b", "fails with assertionerror, asserts, checks", flags=0),
    _idiom(r"\bre\.(?:compile|match|search|sub|fullmatch|escape|split|findall)\b", "regex, regular expression"),
    _idiom(r"\braise\b", "raises, fails with an error, exception", flags=0),
    _idiom(r"\bb(?:\"\"|'')", "empty bytes, bytestring", flags=0),
    _idiom(r"\bos\.sep\b", "the os path separator"),
    _idiom(r"\bos\.altsep\b", "the alternate path separator"),
    _idiom(r"@(?:functools\.)?(?:lru_)?cache\b|@cached_property\b", "cached, computed once, memoized"),
    _idiom(r"\bis None\s*:", "lazily, the first time, on first use", flags=0),
    _idiom(r"\bdef __init__\b", "constructor, created, initializes", flags=0),
    _idiom(r"\bdef __(?:enter|exit)__\b", "context manager, with statement", flags=0),
    _idiom(r"\byield\b", "generator, yields", flags=0),
    _idiom(r"\basync def\b", "asynchronous coroutine", flags=0),
    _idiom(r"\bwarnings\.warn\b|DeprecationWarning", "warns, warning, deprecated"),
    _idiom(r"\bexcept\b[\w\s.,()]{0,120}:", "catches, handles the error", flags=0),
    _idiom(r"\bctypes\b|\bCDLL\b", "c library, loads"),
    _idiom(r"@dataclass\b", "data class"),
    _idiom(r"^\s*(?:el)?if\s+(?:typing\.)?TYPE_CHECKING\s*:",
           "only for type checkers, imported only when type checking", flags=0),
    _idiom(r"__name__\s*==\s*['\"]__main__['\"]", "run as a script, main"),
    _idiom(r"^\s*__all__\s*=", "exports, public names", flags=0),
    _idiom(r"\bsys\.version_info\b", "python version check"),
    _idiom(r"^\s*raise\s+NotImplementedError\s*(?:\(\s*\))?\s*$|@(?:abc\.)?abstractmethod\b",
           "abstract, subclasses must implement", flags=0),
    _idiom(r"\bexcept\s+(?:\(?\s*)?(?:ImportError|ModuleNotFoundError)\b", "optional import, falls back when missing", flags=0),
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
    _idiom(r"\bauthor_email\b|^\s*email\s*=|\{\s*name\s*=.{0,200}?email\s*=|@[\w-]+\.[a-z]{2,}\b", "contact address, email"),
    _idiom(r"Development Status :: 5\b", "stable, production"),
    _idiom(r"\bpackage-ecosystem\b", "updates dependencies, dependabot"),
    _idiom(r"(?<![\w.])3\.1?\d\b", "python", _PY_FILES),
)


def glossed(line: str, context: str) -> list[str]:
    """The phrases the idioms say of one cited ``line`` (``context``: the path and all cited text)."""
    return [i.says for i in IDIOMS if i.line.search(line) and (i.where is None or i.where.search(context))]
