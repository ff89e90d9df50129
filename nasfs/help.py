"""The grammar with examples, as served at ``.nas/HELP`` and by ``nasfs help``;
the MCP door answers ``nas_help`` with :data:`MCP_HELP` and then this, so its
tool list stays short and the manual is read once, when wanted."""

HELP = """\
nasfs: budgeted, checkable reads. A real file stays a plain file; views sit beside it.

  cat notes.md                      the real file, read-write
  cat notes.md@outline              headings / symbols / keys, each line starting with its lines
                                    (11-20 ## Renewal); data files to the levels that keep a
                                    look-up cheapest (depth=K/M), or the file when cheaper
  cat notes.md@L12-L18              exactly lines 12..18, no header
  cat notes.md@section=Renewal      one section: heading text, Class.method, a.b.0 key path
                                    (NAME~2: the 2nd of duplicates; %2F for /, %40 for @)
  cat app.yaml@section=spec@outline the section's whole outline: the follow-up a data outline
                                    names where it leaves a level out (5-40 spec{9} @section=spec@outline)
  cat app.yaml@keys                 every key of a data file with its lines; a data outline ends
                                    with the keys it folds (keys: memory 16,37, image ×32) or
                                    says keys=@keys in its header
  cat notes.md@since=v1             unified diff from a revision to the current content
  cat notes.md@400                  the richest view within 400 tokens: full > outline >
                                    shallower outlines > a page (next=@outline=41@400) > skeleton
  cat notes.md@section=Renewal@200  any view, degraded to fit a budget
  cat notes.md@outline.json         the JSON envelope instead of text
  cat src@2000   cat .@2000         a folder's map: files by importance, top entries, pointers
  ls .at/                           branches and tags; .at/<rev>/... is the tree at any revision
  cat .nas/deref/notes.md@9f2c1de3a41b#L12-L18   the bytes a pointer names, at its commit
  cat '.nas/search/renewal glob:*.md@400'        snippets with pointers, never whole files
                                    (re:REGEX, in:FOLDER, glob:PATTERN, skip:N; %2F for /)
  cat .nas/diff/v1..main@300        tree diff, degrading to changed entries, then a diffstat
  cat notes.md@summary              a generated summary, when a summarizer is configured
                                    (EAGAIN: queued, try again later)
  cat .nas/stats  .nas/errors       what was served and saved; recent refusals and why
  cat .nas/status                   long work running now

Every view but a line range starts with one header line:
  nasfs view=outline tokens=212 generated=false pointer=nas://node/tree/notes.md@<commit>#L1-L40 ...
tokens counts the whole read, header included; an outline line 12-18 is that pointer with #L12-L18,
which plain git verifies: git show <commit>:notes.md | sed -n 12,18p
A name that exists is always the real file, even with '@' in it. Views are never listed by ls.
"""

MCP_HELP = """\
How to spend tokens (MCP). nas_read(path, view=V) reads what the mount serves as path@V below.
0. Map the tree: nas_read(path=".", budget_tokens=2000), or a folder's path: files by importance.
1. Look before reading: view="outline", or budget_tokens alone (the richest view that fits).
2. Read only what you need: view="section=NAME" (a heading, Class.method, key.path) or "L12-L18";
   an outline line ending @section=NAME@outline names the follow-up listing what it left out; a
   last line "keys: name 18, id 3-9" gives the lines of each key it folds (or its header says
   keys=@keys: view="keys" lists every key of the file with its lines).
3. Cite the evidence pointers (nas://node/tree/path@commit#La-Lb); nas_deref shows their bytes.
4. Find text with nas_search; see what changed with view="since=REV" or nas_diff("REV..").
5. tokenizer= counts for your model (o200k_base, claude, llama, max:A,B), margin= leaves headroom.
Every answer declares the view served and its tokens; a page's header says next= for the rest.
"""
