#!/usr/bin/env python3
"""Writes the fixture cases of testdata/cases/ (see README.md there).

The committed files are the fixtures; this script is how they were written, so that binary
content (CRLF, BOM, NUL, Latin-1, UTF-16) is spelled out readably. Every expected tree here is
derived from SPEC §1–§5 by hand, never from redline's output. Run it from anywhere:

    python3 testdata/cases/generate.py

It rewrites every case directory it knows and leaves other directories alone.
"""

import hashlib
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = []


class Link:
    """A symlink in a tree."""

    def __init__(self, target):
        self.target = target


def b(x):
    return x.encode("utf-8") if isinstance(x, str) else x


def sha(x):
    return "sha256:" + hashlib.sha256(b(x)).hexdigest()


def case(name, files=None, request=None, changes=None, *, args=None, exit=0, codes=(), checks=None,
         request_name="request.json", ascii_json=True, expected=None, pending=None):
    """One case. `changes` maps paths to new content (None deletes); the expected tree is the
    input with them applied. A failing case has no changes: its expected tree is the input."""
    files = files or {}
    if expected is None:
        expected = dict(files)
        for p, v in (changes or {}).items():
            if v is None:
                expected.pop(p, None)
            else:
                expected[p] = v
    CASES.append(dict(name=name, files=files, request=request, expected=expected, args=args,
                      exit=exit, codes=sorted(codes), checks=checks or {},
                      request_name=request_name, ascii_json=ascii_json, pending=pending))


def edit(old, new, **kw):
    e = {"oldText": old, "newText": new}
    e.update(kw)
    return e


def one(path, *edits, **kw):
    """A canonical request with one file object."""
    f = {"path": path, "edits": list(edits)}
    f.update(kw)
    return {"files": [f]}


def write_tree(root, tree):
    for p, v in tree.items():
        full = os.path.join(root, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if isinstance(v, Link):
            os.symlink(v.target, full)
        else:
            with open(full, "wb") as f:
                f.write(b(v))


def emit():
    for c in CASES:
        d = os.path.join(HERE, c["name"])
        if os.path.exists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        if c["files"]:
            write_tree(os.path.join(d, "input"), c["files"])
        if c["expected"]:
            write_tree(os.path.join(d, "expected"), c["expected"])
        r = c["request"]
        if r is not None:
            if not isinstance(r, (str, bytes)):
                r = json.dumps(r, indent=2, ensure_ascii=c["ascii_json"]) + "\n"
            with open(os.path.join(d, c["request_name"]), "wb") as f:
                f.write(b(r))
        meta = {}
        if c["pending"]:
            meta["pending"] = c["pending"]
        if c["args"]:
            meta["args"] = c["args"]
        meta["exit"] = c["exit"]
        meta["codes"] = c["codes"]
        if c["checks"]:
            meta["checks"] = c["checks"]
        with open(os.path.join(d, "case.json"), "w") as f:
            f.write(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    print(f"{len(CASES)} cases")


E0 = "/files/0/edits/0"
E1 = "/files/0/edits/1"
F0 = "/files/0"


def rng(l0, c0, l1, c1):
    return {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}}


# ---------------------------------------------------------------- 0xx decode (§3.1)

BOM = b"\xef\xbb\xbf"
case("001_bom_kept", {"a.txt": BOM + b"first\nsecond\nthird\n"},
     one("a.txt", edit("first", "FIRST")),
     {"a.txt": BOM + b"FIRST\nsecond\nthird\n"},
     checks={F0 + "/bom": True, E0 + "/match": "exact", E0 + "/range": rng(0, 0, 0, 5)})
case("002_bom_crlf_multi_edit", {"a.txt": BOM + b"first\r\nsecond\r\nthird\r\nfourth\r\n"},
     one("a.txt", edit("second\n", "SECOND\n"), edit("fourth\n", "FOURTH\n")),
     {"a.txt": BOM + b"first\r\nSECOND\r\nthird\r\nFOURTH\r\n"},
     checks={F0 + "/eol": "crlf", F0 + "/bom": True})
case("003_bom_crlf_oldtext_without_newline", {"a.txt": BOM + b"one\r\ntwo\r\n"},
     one("a.txt", edit("two", "TWO")), {"a.txt": BOM + b"one\r\nTWO\r\n"})
case("004_binary_nul", {"a.bin": b"ab\x00cd\n"}, one("a.bin", edit("ab", "x")),
     exit=1, codes=["binary_file"],
     checks={F0 + "/status": "failed", F0 + "/error/code": "binary_file", E0 + "/status": "skipped"})
case("005_nul_after_8k_is_text", {"a.txt": b"head\n" + b"y" * 9000 + b"\x00tail\n"},
     one("a.txt", edit("head", "HEAD")), {"a.txt": b"HEAD\n" + b"y" * 9000 + b"\x00tail\n"})
case("006_nul_at_8k_boundary_is_binary", {"a.txt": b"head\n" + b"y" * (8192 - 6) + b"\x00tail\n"},
     one("a.txt", edit("head", "HEAD")), exit=1, codes=["binary_file"])
case("007_utf16le_bom", {"a.txt": "\ufeffhello\n".encode("utf-16-le")}, one("a.txt", edit("hello", "bye")),
     exit=1, codes=["unsupported_encoding"], checks={F0 + "/error/code": "unsupported_encoding"})
case("008_utf16be_bom", {"a.txt": "\ufeffhello\n".encode("utf-16-be")}, one("a.txt", edit("hello", "bye")),
     exit=1, codes=["unsupported_encoding"])
case("009_utf32le_bom", {"a.txt": "\ufeffhi\n".encode("utf-32-le")}, one("a.txt", edit("hi", "bye")),
     exit=1, codes=["unsupported_encoding"])
case("010_latin1", {"a.txt": "café\nbar\n".encode("latin-1")}, one("a.txt", edit("bar", "baz")),
     exit=1, codes=["unsupported_encoding"])
# SPEC §3a: decoding is needed only to match edits.
case("013_delete_binary_file", {"a.bin": b"ab\x00cd\n", "keep.txt": "k\n"}, {"files": [{"path": "a.bin", "delete": True}]},
     {"a.bin": None}, checks={F0 + "/status": "applied", F0 + "/op": "delete",
                             F0 + "/hashBefore": sha(b"ab\x00cd\n"), F0 + "/eol": None, F0 + "/bom": None})
case("014_content_overwrites_latin1_file", {"a.txt": "café\n".encode("latin-1")},
     {"files": [{"path": "a.txt", "content": "caf\u00e9\n"}]}, {"a.txt": "caf\u00e9\n"},
     checks={F0 + "/op": "overwrite", F0 + "/warnings/0/code": "overwrote_existing"}, ascii_json=True)
case("015_pure_move_of_binary_file", {"a.bin": b"\xff\xfe\x00x"}, {"files": [{"path": "a.bin", "moveTo": "b.bin"}]},
     {"a.bin": None, "b.bin": b"\xff\xfe\x00x"}, checks={F0 + "/op": "move", F0 + "/status": "applied"})
case("016_move_of_binary_file_with_edits_is_refused", {"a.bin": b"ab\x00cd\n"},
     {"files": [{"path": "a.bin", "moveTo": "b.bin", "edits": [edit("ab", "x")]}]},
     exit=1, codes=["binary_file"])
case("017_stale_before_decoding", {"a.bin": b"ab\x00cd\n"},
     {"files": [{"path": "a.bin", "edits": [edit("ab", "x")], "expectHash": sha(b"other")}]},
     exit=1, codes=["stale"], checks={F0 + "/hashBefore": sha(b"ab\x00cd\n"), F0 + "/eol": None})
case("018_undecodable_file_reports_hash_before_only", {"a.txt": "café\n".encode("latin-1")},
     one("a.txt", edit("caf", "x")), exit=1, codes=["unsupported_encoding"],
     checks={F0 + "/hashBefore": sha("café\n".encode("latin-1")), F0 + "/eol": None, F0 + "/bom": None})
# A stale file is not decoded (the check comes first), so it has no eol/bom; a file whose edits
# fail was decoded and has them.
case("019_stale_file_reports_hash_before_only", {"a.txt": b"a\r\n"},
     one("a.txt", edit("a", "b"), expectHash=sha(b"x")), exit=1, codes=["stale"],
     checks={F0 + "/hashBefore": sha(b"a\r\n"), F0 + "/eol": None, F0 + "/bom": None})
case("019b_failed_edit_reports_eol", {"a.txt": b"a\r\n"}, one("a.txt", edit("zz", "b")), exit=1, codes=["not_found"],
     checks={F0 + "/hashBefore": sha(b"a\r\n"), F0 + "/eol": "crlf", F0 + "/bom": False})
case("019c_failed_file_has_no_warnings", {"a.txt": "A\n", "b.txt": b"B\x00"},
     {"files": [{"path": "a.txt", "moveTo": "b.txt", "edits": [edit("zz", "y")]}]}, exit=1, codes=["not_found"],
     checks={F0 + "/warnings": []})
case("011_invalid_utf8_after_bom", {"a.txt": BOM + b"ok\n\xff\n"}, one("a.txt", edit("ok", "fine")),
     exit=1, codes=["unsupported_encoding"])
case("012_bom_only_in_content_not_matched", {"a.txt": BOM + b"x\n"},
     one("a.txt", edit("\ufeffx", "y")), exit=1, codes=["not_found"])

# ---------------------------------------------------------------- 1xx line endings (§3.2)

case("101_crlf_file_lf_oldtext", {"a.txt": b"line one\r\nline two\r\nline three\r\n"},
     one("a.txt", edit("line two\n", "replaced line\n")),
     {"a.txt": b"line one\r\nreplaced line\r\nline three\r\n"},
     checks={E0 + "/match": "exact", F0 + "/eol": "crlf"})
case("102_lf_preserved", {"a.txt": "first\nsecond\nthird\n"}, one("a.txt", edit("second\n", "REPLACED\n")),
     {"a.txt": "first\nREPLACED\nthird\n"}, checks={F0 + "/eol": "lf"})
case("103_lone_cr_file", {"a.txt": b"a\rb\rc"}, one("a.txt", edit("b", "B\nB2")),
     {"a.txt": b"a\rB\rB2\rc"}, checks={F0 + "/eol": "cr", E0 + "/range": rng(1, 0, 1, 1)})
case("104_cr_file_crlf_oldtext_is_exact", {"a.txt": b"a\rb\rc\r"}, one("a.txt", edit("a\r\nb", "x\r\ny")),
     {"a.txt": b"x\ry\rc\r"}, checks={E0 + "/match": "exact"})
case("105_mixed_untouched_lines_keep_their_ending", {"a.txt": b"a\r\nb\nc\r\nd\r\n"},
     one("a.txt", edit("c", "C1\nC2")), {"a.txt": b"a\r\nb\nC1\r\nC2\r\nd\r\n"},
     checks={F0 + "/eol": "crlf"})
case("106_mixed_replaced_break_takes_dominant", {"a.txt": b"a\r\nb\nc\r\nd\r\n"},
     one("a.txt", edit("b\nc", "B\nC")), {"a.txt": b"a\r\nB\r\nC\r\nd\r\n"})
case("107_tie_is_lf", {"a.txt": b"a\r\nb\nc"}, one("a.txt", edit("c", "c\nd")),
     {"a.txt": b"a\r\nb\nc\nd"}, checks={F0 + "/eol": "lf"})
case("108_no_endings_is_lf", {"a.txt": b"abc"}, one("a.txt", edit("b", "1\r\n2")),
     {"a.txt": b"a1\n2c"}, checks={F0 + "/eol": "lf"})
case("109_cr_dominant_over_lf", {"a.txt": b"a\rb\rc\nd\r"}, one("a.txt", edit("d", "d\ne")),
     {"a.txt": b"a\rb\rc\nd\re\r"}, checks={F0 + "/eol": "cr"})
case("110_no_final_newline_kept", {"a.txt": "a\nb"}, one("a.txt", edit("b", "B")), {"a.txt": "a\nB"})
case("111_final_newline_kept", {"a.txt": "a\nb\n"}, one("a.txt", edit("b", "B")), {"a.txt": "a\nB\n"})
case("112_span_covers_end_removes_final_newline", {"a.txt": "a\nb\n"}, one("a.txt", edit("b\n", "B")),
     {"a.txt": "a\nB"})
case("113_span_covers_end_adds_final_newline", {"a.txt": b"a\r\nb"}, one("a.txt", edit("b", "B\n")),
     {"a.txt": b"a\r\nB\r\n"})
case("114_newtext_crlf_on_lf_file", {"a.txt": "x\ny\n"}, one("a.txt", edit("x", "1\r\n2\r3")),
     {"a.txt": "1\n2\n3\ny\n"})
case("115_crlf_and_lf_variants_are_duplicates", {"a.txt": b"hello\r\nworld\r\n---\r\nhello\nworld\n"},
     one("a.txt", edit("hello\nworld\n", "x\n")), exit=1, codes=["ambiguous"],
     checks={E0 + "/error/occurrences": 2})
case("116_whitespace_only_last_line_without_newline", {"a.txt": "say \u201chi\u201d\nbar\n   "},
     one("a.txt", edit('say "hi"', 'say "bye"')), {"a.txt": 'say "bye"\nbar\n   '},
     checks={E0 + "/normalizations": ["quotes"]})
case("118_empty_crlf_line_inside_match_is_not_trailing_whitespace", {"a.txt": "say(\u2019x\u2019)\r\n\r\nnext\r\n"},
     one("a.txt", edit("say('x')\n\nnext", "done")), {"a.txt": b"done\r\n"},
     checks={E0 + "/match": "normalized", E0 + "/normalizations": ["quotes"]})
case("119_empty_cr_line_inside_match", {"a.txt": "a\u2019\r\rb\r"},
     one("a.txt", edit("a'\n\nb", "c")), {"a.txt": b"c\r"},
     checks={E0 + "/normalizations": ["quotes"]})
case("117_oldtext_crlf_on_crlf_file_is_exact", {"a.txt": b"first\r\nsecond\r\nthird\r\n"},
     one("a.txt", edit("first\r\nsecond", "one\r\ntwo")), {"a.txt": b"one\r\ntwo\r\nthird\r\n"},
     checks={E0 + "/match": "exact"})

# ---------------------------------------------------------------- 2xx N(·) (§3.3, §3.5, §3a)

case("201_nfkc_ligature", {"a.txt": "\ufb01nd x\n"}, one("a.txt", edit("find x", "search x")),
     {"a.txt": "search x\n"}, checks={E0 + "/match": "normalized", E0 + "/normalizations": ["nfkc"]})
case("202_nfkc_fullwidth_and_combining", {"a.txt": "\uff21\uff22\uff23\uff11\uff12\uff13\ncafe\u0301\n"},
     one("a.txt", edit("ABC123\ncaf\u00e9\n", "XYZ789\ncoffee\n")), {"a.txt": "XYZ789\ncoffee\n"},
     checks={E0 + "/normalizations": ["nfkc"]})
case("203_fullwidth_chinese_punctuation", {"a.txt": "你好，世界\n你好（世界）\n"},
     one("a.txt", edit("你好,世界\n你好(世界)\n", "你好，pi\n你好(pi)\n")), {"a.txt": "你好，pi\n你好(pi)\n"},
     checks={E0 + "/normalizations": ["nfkc"]}, ascii_json=False)
case("204_trailing_whitespace_inside_match", {"a.txt": "line one   \nline two  \nline three\n"},
     one("a.txt", edit("line one\nline two\n", "replaced\n")), {"a.txt": "replaced\nline three\n"},
     checks={E0 + "/match": "normalized", E0 + "/normalizations": ["trailing_whitespace"]})
case("205_trailing_whitespace_after_match_stays", {"a.txt": "x  \ny\n"}, one("a.txt", edit("x", "z")),
     {"a.txt": "z  \ny\n"}, checks={E0 + "/match": "exact", E0 + "/range": rng(0, 0, 0, 1)})
case("206_trailing_whitespace_in_oldtext_is_exact", {"a.txt": "x  \ny\n"}, one("a.txt", edit("x  ", "z")),
     {"a.txt": "z\ny\n"}, checks={E0 + "/match": "exact", E0 + "/range": rng(0, 0, 0, 3)})
case("207_trimmed_last_line_extends_to_line_end", {"a.txt": "x  \t\ny\n"}, one("a.txt", edit("x ", "z")),
     {"a.txt": "z\ny\n"},
     checks={E0 + "/match": "normalized", E0 + "/normalizations": ["trailing_whitespace"],
             E0 + "/range": rng(0, 0, 0, 4)})
case("208_trimmed_last_line_must_end_a_line", {"a.txt": "xy\n"}, one("a.txt", edit("x ", "z")),
     exit=1, codes=["not_found"])
# SPEC §3.4: an exact occurrence always counts, even mid-line.
case("209_trimmed_last_line_exact_mid_line_counts", {"a.txt": "x  y\n"}, one("a.txt", edit("x ", "z")),
     {"a.txt": "z y\n"}, checks={E0 + "/match": "exact", E0 + "/range": rng(0, 0, 0, 2)})
case("209b_exact_oldtext_ending_in_space_mid_line", {"a.txt": "let x = 1;\n"}, one("a.txt", edit("let x = ", "let y = ")),
     {"a.txt": "let y = 1;\n"}, checks={E0 + "/match": "exact"})
case("209c_exact_trailing_space_mid_line_on_crlf_file", {"a.txt": b"a\r\nlet x = 1;\r\n"},
     one("a.txt", edit("a\nlet x = ", "b\nlet y = ")), {"a.txt": b"b\r\nlet y = 1;\r\n"},
     checks={E0 + "/match": "exact"})
case("209d_near_exact_trailing_space_mid_line_not_counted", {"a.txt": "let x =\t1;\n"}, one("a.txt", edit("let x = ", "y")),
     exit=1, codes=["not_found"])
case("210_trimmed_last_line_disambiguates", {"a.txt": "x  \nxy\n"}, one("a.txt", edit("x ", "z")),
     {"a.txt": "z\nxy\n"}, checks={E0 + "/range": rng(0, 0, 0, 3)})
case("211_untrimmed_oldtext_counts_mid_line", {"a.txt": "x  \nxy\n"}, one("a.txt", edit("x", "z")),
     exit=1, codes=["ambiguous"])
case("212_smart_single_quotes", {"a.txt": "console.log(\u2018hello\u2019);\n"},
     one("a.txt", edit("console.log('hello');", "console.log('world');")),
     {"a.txt": "console.log('world');\n"}, checks={E0 + "/normalizations": ["quotes"]})
case("213_smart_double_quotes", {"a.txt": "const msg = \u201cHello World\u201d;\n"},
     one("a.txt", edit('const msg = "Hello World";', 'const msg = "Goodbye";')),
     {"a.txt": 'const msg = "Goodbye";\n'}, checks={E0 + "/normalizations": ["quotes"]})
case("214_quote_table", {"a.txt": "a\u2018b\u2019c\u201ad\u201be \u201cf\u201dg\u201eh\u201fi\n"},
     one("a.txt", edit("a'b'c'd'e \"f\"g\"h\"i", "q")), {"a.txt": "q\n"},
     checks={E0 + "/normalizations": ["quotes"]})
case("215_dash_table", {"a.txt": "1\u20102\u20113\u20124\u20135\u20146\u20157\u22128\n"},
     one("a.txt", edit("1-2-3-4-5-6-7-8", "d")), {"a.txt": "d\n"},
     checks={E0 + "/normalizations": ["dashes"]})
case("216_space_table", {"a.txt": "a\u00a0b\u2000c\u2001d\u2002e\u2003f\u2004g\u2005h\u2006i\u2007j\u2008k\u2009l\u200am\u202fn\u205fo\u3000p\n"},
     one("a.txt", edit("a b c d e f g h i j k l m n o p", "s")), {"a.txt": "s\n"},
     checks={E0 + "/normalizations": ["spaces"]})
case("217_nbsp_is_spaces_not_nfkc", {"a.txt": "hello\u00a0world\n"},
     one("a.txt", edit("hello world", "hello universe")), {"a.txt": "hello universe\n"},
     checks={E0 + "/normalizations": ["spaces"]})
case("218_dashes_pi", {"a.txt": "range: 1\u20135\nbreak\u2014here\n"},
     one("a.txt", edit("range: 1-5\nbreak-here", "range: 10-50\nbreak--here")),
     {"a.txt": "range: 10-50\nbreak--here\n"}, checks={E0 + "/normalizations": ["dashes"]})
case("219_nfkc_then_table", {"a.txt": "a\ufe58b\n"}, one("a.txt", edit("a-b", "c")), {"a.txt": "c\n"},
     checks={E0 + "/normalizations": ["nfkc", "dashes"]})
case("219b_nfkc_alone_explains_small_em_dash", {"a.txt": "a\ufe58b\n"}, one("a.txt", edit("a\u2014b", "c")),
     {"a.txt": "c\n"}, checks={E0 + "/normalizations": ["nfkc"]})
case("219c_ideographic_space_with_combining_mark_is_spaces", {"a.txt": "a\u3000\u0344b\n"},
     one("a.txt", edit("a \u0344b", "c")), {"a.txt": "c\n"}, checks={E0 + "/normalizations": ["spaces"]})
case("220_all_five_in_order", {"a.txt": "\uff21\u2019  \nz\u00a0\u2014\n"},
     one("a.txt", edit("A'\nz -", "ok")), {"a.txt": "ok\n"},
     checks={E0 + "/normalizations": ["nfkc", "trailing_whitespace", "quotes", "dashes", "spaces"]})
case("221_normalized_oldtext_on_ascii_file", {"a.txt": 'say "hi"\n'},
     one("a.txt", edit("say \u201chi\u201d", "say bye")), {"a.txt": "say bye\n"},
     checks={E0 + "/match": "normalized", E0 + "/normalizations": ["quotes"]})
case("222_fuzzy_multi_edit", {"a.txt": "console.log(\u2018hello\u2019);\nhello\u00a0world\n"},
     one("a.txt", edit("console.log('hello');", "console.log('world');"), edit("hello world", "hello universe")),
     {"a.txt": "console.log('world');\nhello universe\n"})
case("223_replacement_equals_nearby_line", {"a.txt": "replace me   \nafter   \n"},
     one("a.txt", edit("replace me\n", "after\n")), {"a.txt": "after\nafter   \n"})
case("224_untouched_lines_byte_identical",
     {"a.txt": "keep before  \nfirst target  \nfirst after\nkeep middle   \nsecond target  \nsecond after\nkeep after  \n"},
     one("a.txt", edit("first target\nfirst after", "FIRST\nFIRST2"), edit("second target\nsecond after", "SECOND\nSECOND2")),
     {"a.txt": "keep before  \nFIRST\nFIRST2\nkeep middle   \nSECOND\nSECOND2\nkeep after  \n"})
case("225_touched_line_keeps_other_characters", {"a.txt": "say \u201chi\u201d \u2014 then x\u00a0y   \nnext \u2014 line   \n"},
     one("a.txt", edit("x y", "X Y")), {"a.txt": "say \u201chi\u201d \u2014 then X Y   \nnext \u2014 line   \n"})
case("226_exact_unique_but_normalized_duplicate", {"a.txt": "it\u2019s\nit's\n"}, one("a.txt", edit("it's", "it is")),
     exit=1, codes=["ambiguous"])
case("227_normalized_duplicates", {"a.txt": "hello world   \nhello world\n"},
     one("a.txt", edit("hello world", "x")), exit=1, codes=["ambiguous"])
case("228_prefer_nothing_exact_is_unique", {"a.txt": "const x = 'exact';\nconst y = 'other';\n"},
     one("a.txt", edit("const x = 'exact';", "const x = 'changed';")),
     {"a.txt": "const x = 'changed';\nconst y = 'other';\n"}, checks={E0 + "/match": "exact"})
case("229_trailing_whitespace_in_oldtext_not_file", {"a.txt": "x\ny\n"}, one("a.txt", edit("x  \ny", "z")),
     {"a.txt": "z\n"}, checks={E0 + "/match": "normalized", E0 + "/normalizations": ["trailing_whitespace"]})
case("230_unicode_whitespace_is_trailing", {"a.txt": "x\u3000\u00a0\ny\n"}, one("a.txt", edit("x\ny", "z")),
     {"a.txt": "z\n"}, checks={E0 + "/normalizations": ["trailing_whitespace"]})

# ---------------------------------------------------------------- 3xx counting (§3.4)

case("301_overlapping_occurrences_are_ambiguous", {"a.txt": "aaa"}, one("a.txt", edit("aa", "b")),
     exit=1, codes=["ambiguous"],
     checks={E0 + "/error/occurrences": 2, E0 + "/error/candidates/0/range": rng(0, 0, 0, 2),
             E0 + "/error/candidates/1/range": rng(0, 1, 0, 3)})
case("302_three_occurrences", {"a.txt": "foo foo foo"}, one("a.txt", edit("foo", "bar")),
     exit=1, codes=["ambiguous"], checks={E0 + "/error/occurrences": 3})
case("303_replace_all", {"a.txt": "foo foo foo\n"}, one("a.txt", edit("foo", "bar", replaceAll=True)),
     {"a.txt": "bar bar bar\n"},
     checks={E0 + "/occurrences": 3, E0 + "/range": rng(0, 0, 0, 3), E0 + "/ranges/2": rng(0, 8, 0, 11)})
case("304_replace_all_takes_leftmost_non_overlapping", {"a.txt": "aaaaa\n"},
     one("a.txt", edit("aa", "b", replaceAll=True)), {"a.txt": "bba\n"},
     checks={E0 + "/occurrences": 2, E0 + "/ranges": [rng(0, 0, 0, 2), rng(0, 2, 0, 4)]})
case("305_replace_all_normalized", {"a.txt": "foo \u201ca\u201d; foo \"a\";\n"},
     one("a.txt", edit('foo "a"', "bar", replaceAll=True)), {"a.txt": "bar; bar;\n"},
     checks={E0 + "/occurrences": 2, E0 + "/match": "normalized", E0 + "/normalizations": ["quotes"]})
case("306_replace_all_overlap_judged_in_n", {"a.txt": "x\u00a0x\u00a0x\n"},
     one("a.txt", edit("x x", "y", replaceAll=True)), {"a.txt": "y\u00a0x\n"},
     checks={E0 + "/occurrences": 1})
case("307_replace_all_none_is_not_found", {"a.txt": "abc\n"}, one("a.txt", edit("zzz", "y", replaceAll=True)),
     exit=1, codes=["not_found"])
case("308_replace_all_single", {"a.txt": "abc\n"}, one("a.txt", edit("b", "B", replaceAll=True)),
     {"a.txt": "aBc\n"}, checks={E0 + "/occurrences": 1})
case("309_whitespace_only_oldtext", {"a.txt": "a  b\n"}, one("a.txt", edit("   ", "x")),
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/files/0/edits/0/oldText", "/ok": False})
case("310_nbsp_only_oldtext", {"a.txt": "a\u00a0b\n"}, one("a.txt", edit("a", "A"), edit("\u00a0", "x")),
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/files/0/edits/1/oldText"})
case("311_empty_oldtext", {"a.txt": "a\n"}, one("a.txt", edit("", "x")), exit=2, codes=["invalid_request"])
case("312_ambiguous_lists_twenty", {"a.txt": "x\n" * 25}, one("a.txt", edit("x", "y")),
     exit=1, codes=["ambiguous"],
     checks={E0 + "/error/occurrences": 25, E0 + "/error/candidates/19/range": rng(19, 0, 19, 1),
             E0 + "/error/candidates/20": None})
case("313_whitespace_only_oldtext_stops_whole_batch", {"a.txt": "a\n", "b.txt": "b\n"},
     {"files": [{"path": "a.txt", "edits": [edit("a", "A")]}, {"path": "b.txt", "edits": [edit("\t \u00a0", "x")]}]},
     exit=2, codes=["invalid_request"])

# ---------------------------------------------------------------- 4xx exact vs normalized, span ends (§3.5, §3a)

case("401_exact_non_nfkc_text_is_exact", {"a.txt": "\ufb01nd\n"}, one("a.txt", edit("\ufb01nd", "find")),
     {"a.txt": "find\n"}, checks={E0 + "/match": "exact", E0 + "/normalizations": []})
case("402_same_trailing_whitespace_mid_oldtext_is_exact", {"a.txt": "a  \nb\n"}, one("a.txt", edit("a  \nb", "c")),
     {"a.txt": "c\n"}, checks={E0 + "/match": "exact"})
case("403_different_trailing_whitespace", {"a.txt": "a\t\nb\n"}, one("a.txt", edit("a \nb", "c")),
     {"a.txt": "c\n"}, checks={E0 + "/match": "normalized", E0 + "/normalizations": ["trailing_whitespace"]})
case("404_trimmed_rule_at_end_of_file", {"a.txt": "a\nx  "}, one("a.txt", edit("x ", "z")), {"a.txt": "a\nz"},
     checks={E0 + "/range": rng(1, 0, 1, 3)})
case("405_trimmed_rule_keeps_crlf", {"a.txt": b"x  \r\ny\r\n"}, one("a.txt", edit("x ", "z")), {"a.txt": b"z\r\ny\r\n"})
case("406_whitespace_only_last_line_needs_empty_line", {"a.txt": "a\nb\n"}, one("a.txt", edit("a\n  ", "X")),
     args=["apply", "--tolerance", "normalized"], exit=1, codes=["not_found"])
case("407_whitespace_only_last_line_matches_blank_line", {"a.txt": "a\n  \nb\n"}, one("a.txt", edit("a\n  ", "X")),
     {"a.txt": "X\nb\n"}, checks={E0 + "/range": rng(0, 0, 1, 2)})
case("408_newtext_as_given", {"a.txt": "x\n"}, one("a.txt", edit("x", "y  \u201cq\u201d\u00a0")),
     {"a.txt": "y  \u201cq\u201d\u00a0\n"})
case("409_ellipsis_nfkc", {"a.txt": "wait\u2026\n"}, one("a.txt", edit("wait...", "go")), {"a.txt": "go\n"},
     checks={E0 + "/normalizations": ["nfkc"]})
case("410_fullwidth_quote_is_nfkc", {"a.txt": "\uff02a\uff02\n"}, one("a.txt", edit('"a"', "b")), {"a.txt": "b\n"},
     checks={E0 + "/normalizations": ["nfkc"]})
case("411_vertical_tab_and_form_feed_trailing", {"a.txt": "a\x0b\x0c\nb\n"}, one("a.txt", edit("a\nb", "c")),
     {"a.txt": "c\n"}, checks={E0 + "/normalizations": ["trailing_whitespace"]})
case("412_inner_whitespace_not_normalized", {"a.txt": "a  b\n"}, one("a.txt", edit("a b", "c")),
     args=["apply", "--tolerance", "normalized"], exit=1, codes=["not_found"])
case("413_leading_whitespace_not_normalized", {"a.txt": "    x\n"}, one("a.txt", edit("  x", "y")),
     {"a.txt": "  y\n"}, checks={E0 + "/range": rng(0, 2, 0, 5)})
case("414_tab_is_not_space", {"a.txt": "a\tb\n"}, one("a.txt", edit("a b", "c")), args=["apply", "--tolerance", "normalized"], exit=1,
     codes=["not_found"])
case("415_empty_file_not_found", {"a.txt": ""}, one("a.txt", edit("x", "y")), exit=1, codes=["not_found"])
case("416_create_empty_file", {}, {"files": [{"path": "e.txt", "content": ""}]}, {"e.txt": ""})
case("417_empty_newtext_deletes_span", {"a.txt": "a\nb\nc\n"}, one("a.txt", edit("b\n", "")), {"a.txt": "a\nc\n"})
case("418_merged_paths_with_dot_slash", {"a.txt": "a b\n"},
     {"files": [{"path": "a.txt", "edits": [edit("a", "A")]}, {"path": "./a.txt", "edits": [edit("b", "B")]}]},
     {"a.txt": "A B\n"}, checks={"/files/1": None})
case("419_expect_hash_uppercase_hex", {"a.txt": "a\n"}, one("a.txt", edit("a", "b"), expectHash=sha("a\n").upper().replace("SHA256", "sha256")),
     {"a.txt": "b\n"})
case("420_expect_hash_counts_bom", {"a.txt": BOM + b"a\n"}, one("a.txt", edit("a", "b"), expectHash=sha("a\n")),
     exit=1, codes=["stale"])
case("421_delete_stale", {"a.txt": "a\n"}, {"files": [{"path": "a.txt", "delete": True, "expectHash": sha("b\n")}]},
     exit=1, codes=["stale"])
case("422_edit_then_create_elsewhere", {"a.txt": "a\n"},
     {"files": [{"path": "a.txt", "edits": [edit("a", "b")]}, {"path": "n/new.txt", "content": "n\n"}]},
     {"a.txt": "b\n", "n/new.txt": "n\n"}, checks={"/files/1/op": "create", "/files/1/status": "applied"})
# SPEC is silent on a move onto a path the batch also changes; redline refuses it as a whole.
case("423_move_onto_path_the_batch_moves", {"a.txt": "A\n", "b.txt": "B\n"},
     {"files": [{"path": "a.txt", "moveTo": "c.txt"}, {"path": "b.txt", "moveTo": "a.txt"}]},
     exit=2, codes=["invalid_request"])
# SPEC §3a: moves onto their own path or two changes reaching one target are request-level.
case("424_two_moves_onto_one_target", {"a.txt": "A\n", "b.txt": "B\n"},
     {"files": [{"path": "a.txt", "moveTo": "c.txt"}, {"path": "b.txt", "moveTo": "c.txt"}]},
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/files/1/moveTo"})
case("425_two_moves_onto_one_target_check", {"a.txt": "A\n", "b.txt": "B\n"},
     {"files": [{"path": "a.txt", "moveTo": "c.txt"}, {"path": "b.txt", "moveTo": "./c.txt"}]},
     args=["apply", "--check"], exit=2)
case("426_two_moves_onto_one_target_resolve", {"a.txt": "A\n", "b.txt": "B\n"},
     {"files": [{"path": "a.txt", "moveTo": "c.txt"}, {"path": "b.txt", "moveTo": "c.txt"}]},
     args=["resolve"], exit=2, codes=["invalid_request"])
case("427_move_onto_itself", {"a.txt": "A\n"}, {"files": [{"path": "a.txt", "moveTo": "./a.txt"}]},
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/files/0/moveTo"})
case("428_move_onto_created_path", {"a.txt": "A\n"},
     {"files": [{"path": "a.txt", "moveTo": "c.txt"}, {"path": "c.txt", "content": "C\n"}]},
     exit=2, codes=["invalid_request"])

# ---------------------------------------------------------------- 5xx boundaries and splice (§3.6)

case("501_combining_mark_boundary", {"a.txt": "cafe\u0301 bar\n"}, one("a.txt", edit("cafe", "tea")),
     exit=1, codes=["not_found"])
case("502_ligature_inside", {"a.txt": "\ufb01x\n"}, one("a.txt", edit("ix", "y")), exit=1, codes=["not_found"])
case("503_ligature_prefix", {"a.txt": "\ufb01x\n"}, one("a.txt", edit("f", "y")), exit=1, codes=["not_found"])
case("504_whole_cluster_matches", {"a.txt": "cafe\u0301 bar\n"}, one("a.txt", edit("caf\u00e9", "tea")),
     {"a.txt": "tea bar\n"}, checks={E0 + "/normalizations": ["nfkc"], E0 + "/range": rng(0, 0, 0, 5)})
case("505_composing_jamo", {"a.txt": "\u1100\u1161\u11a8 x\n"}, one("a.txt", edit("\uac01 x", "y")),
     {"a.txt": "y\n"}, checks={E0 + "/normalizations": ["nfkc"]})
case("506_jamo_prefix_not_boundary", {"a.txt": "\u1100\u1161 x\n"}, one("a.txt", edit("\u1100", "y")),
     exit=1, codes=["not_found"])
case("506b_compatibility_jamo_composes", {"a.txt": "\u3131\u1161 x\n"}, one("a.txt", edit("\uac00 x", "y")),
     {"a.txt": "y\n"}, checks={E0 + "/normalizations": ["nfkc"]})
case("506c_compatibility_jamo_prefix_not_boundary", {"a.txt": "\u3131\u1161 x\n"}, one("a.txt", edit("\u3131", "y")),
     exit=1, codes=["not_found"])
case("506d_halfwidth_jamo_composes", {"a.txt": "\uffa1\u1161\n"}, one("a.txt", edit("\uac00", "y")),
     {"a.txt": "y\n"}, checks={E0 + "/normalizations": ["nfkc"]})
case("506e_circled_syllable_with_final_jamo", {"a.txt": "\u326e\u11a8 z\n"}, one("a.txt", edit("\uac01 z", "y")),
     {"a.txt": "y\n"}, checks={E0 + "/normalizations": ["nfkc"]})
case("506f_halfwidth_voiced_mark_is_in_the_cluster", {"a.txt": "\uff76\uff9e\n"}, one("a.txt", edit("\uff76", "y")),
     exit=1, codes=["not_found"])
case("506g_halfwidth_voiced_mark_whole_cluster", {"a.txt": "x\uff76\uff9ey\n"}, one("a.txt", edit("x\u30ac", "z")),
     {"a.txt": "zy\n"}, checks={E0 + "/normalizations": ["nfkc"]})
case("506h_halfwidth_semi_voiced_mark_after_ascii", {"a.txt": "a\uff9fb\n"}, one("a.txt", edit("a", "z")),
     exit=1, codes=["not_found"])
case("507_bytes_around_span_unchanged",
     {"a.txt": b"  \xe2\x80\x9cq\xe2\x80\x9d  \t\r\nx\xc2\xa0\xe2\x80\x94y   \r\n\xef\xbc\xa1\rend"},
     one("a.txt", edit("q", "Q")),
     {"a.txt": b"  \xe2\x80\x9cQ\xe2\x80\x9d  \t\r\nx\xc2\xa0\xe2\x80\x94y   \r\n\xef\xbc\xa1\rend"})
case("508_combining_mark_after_match_end", {"a.txt": "ab\u0301c\n"}, one("a.txt", edit("ab", "x")),
     exit=1, codes=["not_found"])
case("509_emoji_and_cjk_neighbours", {"a.txt": "日本😀x😀語\n"}, one("a.txt", edit("x", "y")),
     {"a.txt": "日本😀y😀語\n"}, checks={E0 + "/range": rng(0, 4, 0, 5)})

# ---------------------------------------------------------------- 6xx batch (§3.7–§3.10)

case("601_disjoint_edits", {"a.txt": "alpha\nbeta\ngamma\ndelta\n"},
     one("a.txt", edit("alpha\n", "ALPHA\n"), edit("gamma\n", "GAMMA\n")),
     {"a.txt": "ALPHA\nbeta\nGAMMA\ndelta\n"})
case("602_against_original", {"a.txt": "foo\nbar\nbaz\n"},
     one("a.txt", edit("foo\n", "foo bar\n"), edit("bar\n", "BAR\n")), {"a.txt": "foo bar\nBAR\nbaz\n"})
case("603_edit_matching_earlier_output_not_found", {"a.txt": "alpha\n"},
     one("a.txt", edit("alpha", "beta"), edit("beta", "gamma")), exit=1, codes=["not_found"],
     checks={E0 + "/status": "resolved", E1 + "/status": "failed", F0 + "/status": "failed"})
case("604_overlap_names_both", {"a.txt": "one\ntwo\nthree\n"},
     one("a.txt", edit("one\ntwo\n", "X\n"), edit("two\nthree\n", "Y\n")), exit=1, codes=["overlap", "overlap"],
     checks={E0 + "/error/otherEdit": 1, E1 + "/error/otherEdit": 0, E0 + "/error/code": "overlap"})
case("605_touching_spans_fine", {"a.txt": "abcd\n"}, one("a.txt", edit("ab", "X"), edit("cd", "Y")),
     {"a.txt": "XY\n"})
case("606_no_partial_apply", {"a.txt": "alpha\nbeta\n"},
     one("a.txt", edit("alpha\n", "ALPHA\n"), edit("missing\n", "x\n")), exit=1, codes=["not_found"],
     checks={E0 + "/status": "resolved", E1 + "/error/code": "not_found", "/written": False, "/ok": False})
case("607_no_op", {"a.txt": "a\n"}, one("a.txt", edit("a", "a")), exit=1, codes=["no_op"])
case("608_no_op_after_line_ending_normalization", {"a.txt": "a\nb\n"}, one("a.txt", edit("a\r\nb", "a\nb")),
     exit=1, codes=["no_op"])
case("609_no_op_before_matching", {"a.txt": "a\n"}, one("a.txt", edit("missing", "missing")),
     exit=1, codes=["no_op"])
case("610_fuzzy_identity_is_no_op", {"a.txt": "\u201ca\u201d  \nnext\n"}, one("a.txt", edit('"a"', '"a"')),
     exit=1, codes=["no_op"])
case("611_already_applied", {"a.txt": "new line\n"}, one("a.txt", edit("old line", "new line")),
     exit=1, codes=["not_found"], checks={E0 + "/error/alreadyApplied": True})
case("612_already_applied_under_n", {"a.txt": "it\u2019s done\n"}, one("a.txt", edit("it is", "it's done")),
     exit=1, codes=["not_found"], checks={E0 + "/error/alreadyApplied": True})
# SPEC §3a: newText must be non-blank, not inside N(oldText), and a valid match.
case("611b_newtext_inside_oldtext_is_not_applied", {"a.txt": "fn main() {}\n"},
     one("a.txt", edit("fn main() { }", "main")), exit=1, codes=["not_found"],
     checks={E0 + "/error/alreadyApplied": None})
case("611c_newtext_lines_inside_oldtext_is_not_applied", {"a.txt": "let a = 1;\n"},
     one("a.txt", edit("let a = 1;\nlet b = 3;", "let a = 1;")), exit=1, codes=["not_found"],
     checks={E0 + "/error/alreadyApplied": None})
case("611d_newtext_split_cluster_is_not_applied", {"a.txt": "cafe\u0301\n"},
     one("a.txt", edit("tea", "cafe")), exit=1, codes=["not_found"], checks={E0 + "/error/alreadyApplied": None})
case("611e_already_applied_says_where", {"a.txt": "one\ntwo\nnew line\n"}, one("a.txt", edit("old line", "new line")),
     exit=1, codes=["not_found"], checks={E0 + "/error/alreadyApplied": True})
case("613_not_found_candidates", {"a.txt": 'fn main() {\n    println!("hello");\n}\n'},
     one("a.txt", edit('    println!("helo");', '    println!("bye");')), exit=1, codes=["not_found"],
     checks={E0 + "/error/candidates/0/range/start/line": 1,
             E0 + "/error/candidates/0/text": '    println!("hello");',
             E0 + "/error/candidates/3": None})
case("614_same_span_twice_is_overlap", {"a.txt": "a\n"}, one("a.txt", edit("a", "b"), edit("a", "c")),
     exit=1, codes=["overlap", "overlap"])
case("615_overlap_pair_and_a_fine_edit", {"a.txt": "one two three four\n"},
     one("a.txt", edit("one two", "1"), edit("two three", "2"), edit("four", "4")),
     exit=1, codes=["overlap", "overlap"], checks={"/files/0/edits/2/status": "resolved"})
case("616_all_or_nothing_across_files", {"a.txt": "a\n", "b.txt": "b\n"},
     {"files": [{"path": "a.txt", "edits": [edit("a", "A")]}, {"path": "b.txt", "edits": [edit("zzz", "B")]}]},
     exit=1, codes=["not_found"], checks={"/files/0/status": "skipped", "/files/1/status": "failed"})
case("617_all_or_nothing_file_error", {"a.txt": "a\n", "b.bin": b"\x00"},
     {"files": [{"path": "a.txt", "edits": [edit("a", "A")]}, {"path": "b.bin", "edits": [edit("x", "y")]},
                {"path": "new.txt", "content": "new\n"}]},
     exit=1, codes=["binary_file"], checks={"/files/0/status": "skipped", "/files/2/status": "skipped"})
case("618_every_edit_reports_its_outcome", {"a.txt": "a b c\n"},
     one("a.txt", edit("zz", "1"), edit("b", "B"), edit("yy", "2")), exit=1, codes=["not_found", "not_found"],
     checks={E0 + "/status": "failed", E1 + "/status": "resolved", "/files/0/edits/2/status": "failed",
             "/errors/0/edit": 0, "/errors/1/edit": 2})
case("619_overlap_with_replace_all", {"a.txt": "ab ab\n"},
     one("a.txt", edit("ab", "X", replaceAll=True), edit("b ab", "Y")), exit=1, codes=["overlap", "overlap"])

case("620_same_n_trimmed_first", {"a.txt": "abc\n"}, one("a.txt", edit("ab ", "X"), edit("ab", "Y")),
     exit=1, codes=["not_found"], checks={E0 + "/error/code": "not_found", E1 + "/status": "resolved"})
case("621_same_n_untrimmed_first", {"a.txt": "abc\n"}, one("a.txt", edit("ab", "Y"), edit("ab ", "X")),
     exit=1, codes=["not_found"], checks={E0 + "/status": "resolved", E1 + "/error/code": "not_found"})
case("622_same_n_counted_separately", {"a.txt": "ab  \nabc\n"},
     one("a.txt", edit("ab ", "X"), edit("ab", "Y")), exit=1, codes=["ambiguous"],
     checks={E0 + "/status": "resolved", E0 + "/range": rng(0, 0, 0, 4), E1 + "/error/occurrences": 2})

case("623_diff_of_touching_edits_after_lone_cr", {"a.txt": "p\n\rq\nr\ns"},
     one("a.txt", edit("q", "\n"), edit("\nr\n", "")), {"a.txt": "p\n\r\ns"},
     checks={F0 + "/diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1,4 +1,3 @@\n p\n-\rq\n-r\n+\r\n s\n\\ No newline at end of file\n"})

case("624_unchanged_content_is_unchanged", {"a.txt": '"a"\n'}, one("a.txt", edit("\u201ca\u201d", '"a"')),
     checks={F0 + "/status": "unchanged", E0 + "/match": "normalized"})
case("625_overwrite_with_same_content_is_unchanged", {"a.txt": "same\n"}, {"files": [{"path": "a.txt", "content": "same\n"}]},
     checks={F0 + "/status": "unchanged"})
MAIN_RS = 'fn main() {\n    let x = 1;\n    println!("{}", x);\n}\n'
case("626_not_found_candidate_for_a_typo", {"m.rs": MAIN_RS}, one("m.rs", edit('    printn!("{}", x);', "Q")),
     exit=1, codes=["not_found"],
     checks={E0 + "/error/candidates/0/range/start/line": 2, E0 + "/error/candidates/0/text": '    println!("{}", x);'})
case("627_not_found_candidate_for_a_short_line", {"m.rs": MAIN_RS}, one("m.rs", edit("fn mian() {", "Q")),
     exit=1, codes=["not_found"], checks={E0 + "/error/candidates/0/range/start/line": 0})
case("628_not_found_candidate_score_and_text", {"m.rs": MAIN_RS}, one("m.rs", edit("let x = 2;", "Q")),
     exit=1, codes=["not_found"],
     checks={E0 + "/error/candidates/0/range": rng(1, 0, 1, 14), E0 + "/error/candidates/0/text": "    let x = 1;",
             E0 + "/error/candidates/0/score": 0.75})
# §3.9/§4: a not_found error always carries `candidates`, empty when nothing in the file is close.
case("629_not_found_without_close_text_has_empty_candidates", {"a.txt": "hello world\n"},
     one("a.txt", edit("zzzzqqqq", "Q")), exit=1, codes=["not_found"],
     checks={E0 + "/error/candidates": [], E0 + "/status": "failed", E0 + "/match": None})

# ---------------------------------------------------------------- 7xx request shapes (§2)

case("701_canonical_with_id", {"a.txt": "a\n"}, one("a.txt", edit("a", "b", id="e1")), {"a.txt": "b\n"},
     checks={E0 + "/id": "e1", E0 + "/index": 0, F0 + "/op": "edit", F0 + "/status": "applied", "/ok": True,
             "/written": True, "/dryRun": False, "/version": 1, F0 + "/hashBefore": sha("a\n"),
             F0 + "/hashAfter": sha("b\n")})
case("702_pi_shape", {"a.txt": "a\nb\n"}, {"path": "a.txt", "edits": [edit("a", "A"), edit("b", "B")]},
     {"a.txt": "A\nB\n"})
case("703_mcp_edit_file_dry_run", {"a.txt": "a\n"},
     {"path": "a.txt", "edits": [edit("a", "b")], "dryRun": True},
     checks={"/dryRun": True, "/written": False, F0 + "/status": "planned"})
case("704_legacy_single_edit", {"a.txt": "a\n"}, {"path": "a.txt", "oldText": "a", "newText": "b"}, {"a.txt": "b\n"})
case("705_claude_shape", {"a.txt": "x x\n"},
     {"file_path": "a.txt", "old_string": "x", "new_string": "y", "replace_all": True}, {"a.txt": "y y\n"},
     checks={E0 + "/occurrences": 2})
case("706_array_of_file_objects", {"a.txt": "a\n", "b.txt": "b\n"},
     [{"path": "a.txt", "edits": [edit("a", "A")]}, {"path": "b.txt", "oldText": "b", "newText": "B"}],
     {"a.txt": "A\n", "b.txt": "B\n"})
case("707_flat_edits", {"a.txt": "a1 a2\n", "b.txt": "b\n"},
     {"edits": [{"path": "a.txt", "oldText": "a1", "newText": "A1"}, {"path": "b.txt", "oldText": "b", "newText": "B"},
                {"path": "a.txt", "oldText": "a2", "newText": "A2"}]},
     {"a.txt": "A1 A2\n", "b.txt": "B\n"}, checks={"/files/0/edits/1/index": 1, "/files/2": None})
case("708_aliases", {"a.txt": "a b c\n"},
     {"path": "a.txt", "edits": [{"old_str": "a", "new_str": "A"}, {"old_text": "b", "new_text": "B"},
                                 {"old_string": "c", "new_string": "C"}]},
     {"a.txt": "A B C\n"})
case("709_merged_objects_for_one_path", {"a.txt": "foo\nbar\n"},
     {"files": [{"path": "a.txt", "edits": [edit("foo\n", "foo bar\n")]},
                {"path": "a.txt", "edits": [edit("bar\n", "BAR\n")]}]},
     {"a.txt": "foo bar\nBAR\n"}, checks={E1 + "/index": 1, "/files/1": None})
case("710_merged_objects_overlap", {"a.txt": "abc\n"},
     {"files": [{"path": "a.txt", "edits": [edit("ab", "X")]}, {"path": "a.txt", "edits": [edit("bc", "Y")]}]},
     exit=1, codes=["overlap", "overlap"])
case("711_content_create", {}, {"files": [{"path": "docs/new.md", "content": "# New\n"}]},
     {"docs/new.md": "# New\n"}, checks={F0 + "/op": "create", F0 + "/warnings": []})
case("712_content_overwrite_warns", {"a.txt": "old\n"}, {"files": [{"path": "a.txt", "content": "new\n"}]},
     {"a.txt": "new\n"}, checks={F0 + "/op": "overwrite", F0 + "/warnings/0/code": "overwrote_existing"})
case("713_delete", {"a.txt": "a\n", "b.txt": "b\n"}, {"files": [{"path": "a.txt", "delete": True}]},
     {"a.txt": None}, checks={F0 + "/op": "delete"})
case("714_delete_missing", {"b.txt": "b\n"}, {"files": [{"path": "a.txt", "delete": True}]},
     exit=1, codes=["file_not_found"])
case("715_move_with_edits", {"src/a.rs": "fn a() {}\n"},
     {"files": [{"path": "src/a.rs", "moveTo": "src/b.rs", "edits": [edit("fn a", "fn b")]}]},
     {"src/a.rs": None, "src/b.rs": "fn b() {}\n"}, checks={F0 + "/op": "move", F0 + "/moveTo": "src/b.rs"})
case("716_move_onto_existing_warns", {"a.txt": "a\n", "b.txt": "b\n"},
     {"files": [{"path": "a.txt", "moveTo": "b.txt"}]},
     {"a.txt": None, "b.txt": "a\n"}, checks={F0 + "/warnings/0/code": "overwrote_existing"})
case("717_move_into_new_directory", {"a.txt": "a\n"}, {"files": [{"path": "a.txt", "moveTo": "d/e/a.txt"}]},
     {"a.txt": None, "d/e/a.txt": "a\n"})
case("718_expect_hash_ok", {"a.txt": "a\n"}, one("a.txt", edit("a", "b"), expectHash=sha("a\n")), {"a.txt": "b\n"})
case("719_expect_hash_stale", {"a.txt": "a\n"}, one("a.txt", edit("a", "b"), expectHash=sha("other\n")),
     exit=1, codes=["stale"], checks={F0 + "/error/code": "stale"})
case("720_expect_hash_missing_file", {}, {"files": [{"path": "a.txt", "content": "x\n", "expectHash": sha("a\n")}]},
     exit=1, codes=["file_not_found"])
case("721_apply_rejects_documents", {"a.txt": "a\n"},
     {"files": [{"path": "a.txt", "edits": [edit("a", "b")]}], "documents": [{"path": "a.txt", "text": "a\n"}]},
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/documents"})
case("722_resolve_uses_documents", {"a.txt": "disk\n"},
     {"files": [{"path": "a.txt", "edits": [edit("buffer", "edited")]}],
      "documents": [{"path": "a.txt", "text": "line\nbuffer\n"}]},
     args=["resolve"], checks={E0 + "/range": rng(1, 0, 1, 6), "/dryRun": True, F0 + "/status": "planned"})
case("723_unknown_field", {"a.txt": "a\n"}, {"files": [{"path": "a.txt", "edits": [{"oldText": "a", "newText": "b", "bogus": 1}]}]},
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/files/0/edits/0/bogus"})
case("724_content_with_edits", {"a.txt": "a\n"}, {"files": [{"path": "a.txt", "content": "x", "edits": [edit("a", "b")]}]},
     exit=2, codes=["invalid_request"])
case("725_empty_files", {"a.txt": "a\n"}, {"files": []}, exit=2, codes=["invalid_request"])
case("726_empty_edits", {"a.txt": "a\n"}, {"files": [{"path": "a.txt", "edits": []}]}, exit=2, codes=["invalid_request"])
case("727_missing_new_text", {"a.txt": "a\n"}, {"files": [{"path": "a.txt", "edits": [{"oldText": "a"}]}]},
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/files/0/edits/0"})
case("728_two_aliases_of_one_field", {"a.txt": "a\n"},
     {"path": "a.txt", "edits": [{"oldText": "a", "old_string": "a", "newText": "b"}]}, exit=2, codes=["invalid_request"])
case("729_conflicting_merged_objects", {"a.txt": "a\n"},
     {"files": [{"path": "a.txt", "delete": True}, {"path": "a.txt", "content": "x"}]}, exit=2, codes=["invalid_request"])
case("730_missing_path", {"a.txt": "a\n"}, {"files": [{"edits": [edit("a", "b")]}]},
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/files/0"})
case("731_no_operation", {"a.txt": "a\n"}, {"files": [{"path": "a.txt"}]}, exit=2, codes=["invalid_request"])
case("732_codex_patch", {"a.txt": "one\ntwo\nthree\n"},
     "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n*** Add File: b.txt\n+new\n*** End Patch\n",
     {"a.txt": "one\nTWO\nthree\n", "b.txt": "new\n"}, request_name="request.patch")
case("733_search_replace", {"a.txt": "one\ntwo\n"},
     "a.txt\n```\n<<<<<<< SEARCH\ntwo\n=======\nTWO\n>>>>>>> REPLACE\n```\n", {"a.txt": "one\nTWO\n"},
     request_name="request.txt")
# SPEC §6: the line break after a block's last old line also matches the end of a file without one.
case("733b_search_replace_deletes_last_line_without_newline", {"a.txt": "one\ntwo"},
     "a.txt\n<<<<<<< SEARCH\ntwo\n=======\n>>>>>>> REPLACE\n", {"a.txt": "one"}, request_name="request.txt")
case("733c_search_replace_replaces_last_lines_without_newline", {"a.txt": "one\ntwo\nthree"},
     "a.txt\n<<<<<<< SEARCH\ntwo\nthree\n=======\nTWO\nTHREE\n>>>>>>> REPLACE\n", {"a.txt": "one\nTWO\nTHREE"},
     request_name="request.txt")
case("733d_search_replace_deletes_only_line_without_newline", {"a.txt": "one"},
     "a.txt\n<<<<<<< SEARCH\none\n=======\n>>>>>>> REPLACE\n", {"a.txt": ""}, request_name="request.txt")
case("733e_codex_deletes_last_line_without_newline", {"a.txt": "one\ntwo"},
     "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n*** End Patch\n", {"a.txt": "one"},
     request_name="request.patch")
case("733f_codex_replaces_last_line_without_newline", {"a.txt": "one\ntwo"},
     "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** End Patch\n", {"a.txt": "one\nTWO"},
     request_name="request.patch")
case("733g_codex_deletes_last_line_no_context", {"a.txt": "one\ntwo"},
     "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n*** End Patch\n", {"a.txt": "one"},
     request_name="request.patch")
case("733h_search_replace_deletes_middle_line", {"a.txt": "one\ntwo\nthree"},
     "a.txt\n<<<<<<< SEARCH\ntwo\n=======\n>>>>>>> REPLACE\n", {"a.txt": "one\nthree"}, request_name="request.txt")
case("734_dry_run_flag", {"a.txt": "a\n"}, one("a.txt", edit("a", "b")), args=["apply", "--dry-run"],
     checks={"/dryRun": True, "/written": False, F0 + "/status": "planned", "/ok": True})
case("735_check_flag_ok", {"a.txt": "a\n"}, one("a.txt", edit("a", "b")), args=["apply", "--check"])
case("736_check_flag_fails", {"a.txt": "a\n"}, one("a.txt", edit("zz", "b")), args=["apply", "--check"], exit=1)
case("737_resolve_never_writes", {"a.txt": "a\n"}, one("a.txt", edit("a", "b")), args=["resolve"],
     checks={"/dryRun": True, "/written": False})
case("738_claude_dry_run", {"a.txt": "a\n"},
     {"file_path": "a.txt", "old_string": "a", "new_string": "b", "dryRun": True}, checks={"/dryRun": True})
case("739_canonical_dry_run", {"a.txt": "a\n"},
     {"files": [{"path": "a.txt", "edits": [edit("a", "b")]}], "dryRun": True}, checks={"/dryRun": True})
case("739b_dry_run_inside_files_entry", {"a.txt": "a\n"},
     {"files": [{"path": "a.txt", "edits": [edit("a", "b")], "dryRun": True}]}, checks={"/dryRun": True, "/written": False})
case("740_raw_utf8_request", {"a.txt": "日本語\n"}, one("a.txt", edit("本", "😀")), {"a.txt": "日😀語\n"},
     ascii_json=False)
case("741_delete_with_edits", {"a.txt": "a\n"}, {"files": [{"path": "a.txt", "delete": True, "edits": [edit("a", "b")]}]},
     exit=2, codes=["invalid_request"])
case("742_pi_legacy_mixed", {"a.txt": "a b\n"},
     {"path": "a.txt", "edits": [edit("a", "A")], "oldText": "b", "newText": "B"}, {"a.txt": "A B\n"},
     checks={E1 + "/index": 1})
case("743_check_writes_nothing_even_when_ok", {"a.txt": "a\n", "d/x.txt": "x\n"},
     {"files": [{"path": "a.txt", "delete": True}, {"path": "d/x.txt", "moveTo": "y.txt"}]}, args=["apply", "--check"])

# 76x: Anthropic's text-editor tool shape (README "Requests"): str_replace is an edit, create is
# content, insert puts new_str as whole lines after line insert_line (0 = start), placed exactly;
# view reads, so an editing command refuses it.
def te(command, path="a.txt", **kw):
    r = {"command": command, "path": path}
    r.update(kw)
    return r


case("760_text_editor_str_replace", {"a.txt": "a\nb\nc\n"}, te("str_replace", old_str="b", new_str="B"),
     {"a.txt": "a\nB\nc\n"})
case("761_text_editor_str_replace_delete", {"a.txt": "a\nb\nc\n"}, te("str_replace", old_str="b\n", new_str=""),
     {"a.txt": "a\nc\n"})
case("762_text_editor_create", {}, te("create", "d/new.txt", file_text="hi\n"), {"d/new.txt": "hi\n"},
     checks={"/files/0/op": "create"})
case("763_text_editor_insert_at_start", {"a.txt": "a\nb\n"}, te("insert", insert_line=0, new_str="z"),
     {"a.txt": "z\na\nb\n"},
     checks={E0 + "/range": rng(0, 0, 0, 0), E0 + "/match": "exact"})
case("764_text_editor_insert_lines_crlf", {"a.txt": "a\r\nb\r\n"}, te("insert", insert_line=1, new_str="x\ny\n"),
     {"a.txt": "a\r\nx\r\ny\r\nb\r\n"}, checks={E0 + "/range": rng(1, 0, 1, 0)})
case("765_text_editor_insert_after_last_line_without_newline", {"a.txt": "a\nb"},
     te("insert", insert_line=2, new_str="c"), {"a.txt": "a\nb\nc"})
case("766_text_editor_insert_after_last_line", {"a.txt": "a\nb\n"}, te("insert", insert_line=2, new_str="c"),
     {"a.txt": "a\nb\nc\n"})
case("767_text_editor_insert_into_empty_file", {"a.txt": ""}, te("insert", insert_line=0, new_str=""),
     {"a.txt": "\n"})
case("768_text_editor_insert_past_the_end", {"a.txt": "a\nb\n"}, te("insert", insert_line=3, new_str="c"),
     exit=1, codes=["not_found"])
case("769_text_editor_view_is_not_an_edit", {"a.txt": "a\n"}, te("view", view_range=[1, -1]),
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/command"})
case("770_text_editor_unknown_command", {"a.txt": "a\n"}, te("undo_edit"),
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/command"})
case("771_text_editor_field_of_another_command", {"a.txt": "a\n"},
     te("str_replace", old_str="a", new_str="b", file_text="x"),
     exit=2, codes=["invalid_request"], checks={"/error/pointer": "/file_text"})
case("772_text_editor_insert_next_to_an_edit", {"a.txt": "a\nb\nc\n"},
     [te("insert", insert_line=1, new_str="x"), te("str_replace", old_str="b", new_str="B")],
     {"a.txt": "a\nx\nB\nc\n"})

# ---------------------------------------------------------------- 8xx paths and file errors (§3a, §5, §7)

case("801_dotdot_outside_root", {"a.txt": "a\n"}, one("../outside.txt", edit("outside", "inside")),
     exit=1, codes=["outside_root"])
case("802_absolute_outside_root", {"a.txt": "a\n"}, one("{ROOT}/../outside.txt", edit("outside", "inside")),
     exit=1, codes=["outside_root"])
case("803_absolute_inside_root", {"a.txt": "a\n"}, one("{ROOT}/a.txt", edit("a", "b")), {"a.txt": "b\n"})
case("804_dotdot_staying_inside", {"a.txt": "a\n", "sub/x.txt": "x\n"}, one("sub/../a.txt", edit("a", "b")),
     {"a.txt": "b\n"})
case("805_file_not_found", {"a.txt": "a\n"}, one("missing.txt", edit("a", "b")), exit=1, codes=["file_not_found"],
     checks={F0 + "/status": "failed", E0 + "/status": "skipped"})
case("806_directory_is_not_a_file", {"dir/x.txt": "x\n"}, one("dir", edit("a", "b")), exit=1, codes=["not_a_file"])
case("807_symlink_inside_edits_target", {"a.txt": "a\n", "link.txt": Link("a.txt")}, one("link.txt", edit("a", "b")),
     {"a.txt": "b\n"})
case("808_symlink_leading_out", {"link.txt": Link("../outside.txt")}, one("link.txt", edit("outside", "x")),
     exit=1, codes=["outside_root"])
case("810_symlink_alias_in_one_batch_is_refused", {"a.txt": "one\ntwo\n", "link.txt": Link("a.txt")},
     [{"path": "a.txt", "oldText": "one", "newText": "1"}, {"path": "link.txt", "oldText": "two", "newText": "2"}],
     args=["apply", "--dry-run"], exit=2, codes=["invalid_request"])
case("809_delete_symlink_removes_link", {"a.txt": "a\n", "link.txt": Link("a.txt")},
     {"files": [{"path": "link.txt", "delete": True}]}, {"link.txt": None})
case("810_create_outside_root", {}, {"files": [{"path": "../new.txt", "content": "x\n"}]}, exit=1, codes=["outside_root"])
case("811_move_outside_root", {"a.txt": "a\n"}, {"files": [{"path": "a.txt", "moveTo": "../moved.txt"}]},
     exit=1, codes=["outside_root"])
case("812_outside_root_with_good_file", {"a.txt": "a\n"},
     {"files": [{"path": "a.txt", "edits": [edit("a", "b")]}, {"path": "../outside.txt", "delete": True}]},
     exit=1, codes=["outside_root"], checks={"/files/0/status": "skipped"})
case("813_create_existing_dir", {"dir/x.txt": "x\n"}, {"files": [{"path": "dir", "content": "x\n"}]},
     exit=1, codes=["not_a_file"])
case("814_edit_missing_parent", {}, one("no/such/dir/a.txt", edit("a", "b")), exit=1, codes=["file_not_found"])

case("830_too_large_edit", {"a.txt": "0123456789abcdefghij\n"}, one("a.txt", edit("0", "x")),
     args=["apply", "--max-file-size", "10", "--max-request-size", "1M"], exit=1, codes=["too_large"], checks={F0 + "/error/code": "too_large"})
case("831_at_size_limit_is_fine", {"a.txt": "012345678\n"}, one("a.txt", edit("0", "x")),
     {"a.txt": "x12345678\n"}, args=["apply", "--max-file-size", "10", "--max-request-size", "1M"])
case("832_too_large_content", {}, {"files": [{"path": "a.txt", "content": "0123456789abcdefghij\n"}]},
     args=["apply", "--max-file-size", "10", "--max-request-size", "1M"], exit=1, codes=["too_large"])
case("833_edit_grows_over_limit", {"a.txt": "0123\n"}, one("a.txt", edit("0", "0123456789")),
     args=["apply", "--max-file-size", "10", "--max-request-size", "1M"], exit=1, codes=["too_large"])
case("834_too_large_in_resolve", {"a.txt": "0123456789abcdefghij\n"}, one("a.txt", edit("0", "x")),
     args=["resolve", "--max-file-size", "1K"], checks={F0 + "/status": "planned"})

# ---------------------------------------------------------------- 9xx positions (§4)

POS_FILE = "日本語 😀 x\n"
for enc, x in (("utf-8", 15), ("utf-16", 7), ("utf-32", 6)):
    case(f"90{['utf-8', 'utf-16', 'utf-32'].index(enc) + 1}_positions_{enc.replace('-', '')}", {"a.txt": POS_FILE},
         one("a.txt", edit("x", "y")), args=["resolve", "--position-encoding", enc],
         checks={E0 + "/range": rng(0, x, 0, x + 1)})
case("904_positions_default_utf16_in_apply", {"a.txt": "😀😀\n日本 z\n"}, one("a.txt", edit("z", "Z")),
     {"a.txt": "😀😀\n日本 Z\n"}, checks={E0 + "/range": rng(1, 3, 1, 4)})
case("905_positions_bom_counts_nowhere", {"a.txt": BOM + "😀x\n".encode()}, one("a.txt", edit("x", "y")),
     args=["resolve", "--position-encoding", "utf-8"], checks={E0 + "/range": rng(0, 4, 0, 5)})
case("906_positions_multiline_span_crlf", {"a.txt": b"ab\r\n\xe6\x97\xa5cd\r\nef\r\n"},
     one("a.txt", edit("cd\nef", "x")), args=["resolve", "--position-encoding", "utf-32"],
     checks={E0 + "/range": rng(1, 1, 2, 2)})
case("907_positions_ambiguous_candidates", {"a.txt": "😀 k\n日 k\n"}, one("a.txt", edit("k", "K")),
     args=["resolve"], exit=1, codes=["ambiguous"],
     checks={E0 + "/error/candidates/0/range": rng(0, 3, 0, 4), E0 + "/error/candidates/1/range": rng(1, 2, 1, 3)})
case("908_positions_normalized_span_utf16", {"a.txt": "𝐀\u2019s x\n"}, one("a.txt", edit("A's", "b")),
     args=["resolve"], checks={E0 + "/range": rng(0, 0, 0, 4)})

# ---------------------------------------------------------------- 95x resolve --format lsp (§4)

WE = "/workspaceEdit/documentChanges"
case("950_lsp_operations", {"a.txt": b"a\r\nb\r\n", "del.txt": "d\n", "mv.txt": "m\n"},
     {"files": [{"path": "a.txt", "edits": [edit("b", "B\nC")]}, {"path": "new.txt", "content": "n\n"},
                {"path": "del.txt", "delete": True}, {"path": "mv.txt", "moveTo": "moved.txt"}]},
     args=["resolve", "--format", "lsp"],
     checks={WE + "/0/edits/0/newText": "B\r\nC", WE + "/0/edits/0/range": rng(1, 0, 1, 1),
             WE + "/1/kind": "create", WE + "/3/kind": "delete", WE + "/4/kind": "rename", "/errors": []})
case("951_lsp_errors_empty_changes", {"a.txt": "a\n", "b.txt": "b\n"},
     {"files": [{"path": "a.txt", "edits": [edit("a", "A")]}, {"path": "b.txt", "edits": [edit("zz", "B")]}]},
     args=["resolve", "--format", "lsp"], exit=1, codes=["not_found"], checks={WE: []})
case("952_lsp_positions_utf16", {"a.txt": "😀x\n"}, one("a.txt", edit("x", "y")),
     args=["resolve", "--format", "lsp"], checks={WE + "/0/edits/0/range": rng(0, 2, 0, 3)})
case("953_lsp_positions_utf8", {"a.txt": "😀x\n"}, one("a.txt", edit("x", "y")),
     args=["resolve", "--format", "lsp", "--position-encoding", "utf-8"], checks={WE + "/0/edits/0/range": rng(0, 4, 0, 5)})
case("954_lsp_replace_all_one_edit_per_span", {"a.txt": "x x\n"}, one("a.txt", edit("x", "y", replaceAll=True)),
     args=["resolve", "--format", "lsp"], checks={WE + "/0/edits/1/range": rng(0, 2, 0, 3)})

# 45x: the relaxed tier (SPEC §3b), the default tolerance. Under --tolerance normalized the same
# requests are 406, 412 and 414 above.
case("450_relaxed_inner_whitespace", {"a.txt": "x\na  b\n"}, one("a.txt", edit("a b", "c")), {"a.txt": "x\nc\n"},
     checks={E0 + "/match": "relaxed", E0 + "/normalizations": ["inner_whitespace"], E0 + "/range": rng(1, 0, 1, 4)})
case("451_relaxed_tab_inside_line", {"a.txt": "a\tb\n"}, one("a.txt", edit("a b", "c")), {"a.txt": "c\n"},
     checks={E0 + "/match": "relaxed", E0 + "/normalizations": ["inner_whitespace"]})
case("452_relaxed_blank_last_line_the_file_lacks", {"a.txt": "a\nb\n"}, one("a.txt", edit("a\n  ", "X")),
     {"a.txt": "X\nb\n"}, checks={E0 + "/match": "relaxed", E0 + "/normalizations": ["blank_lines"]})
case("453_relaxed_dedented_block_reindented", {"a.txt": "fn f() {\n    if a {\n        b();\n    }\n}\n"},
     one("a.txt", edit("if a {\n    b();\n}", "if a {\n    c();\n    d();\n}")),
     {"a.txt": "fn f() {\n    if a {\n        c();\n        d();\n    }\n}\n"},
     checks={E0 + "/match": "relaxed", E0 + "/normalizations": ["indentation"], E0 + "/range": rng(1, 0, 3, 5)})
case("454_relaxed_relative_indentation_must_be_uniform", {"a.txt": "  if a {\n    b();\n  }\n"},
     one("a.txt", edit("if a {\nb();\n}", "x")), exit=1, codes=["not_found"])
case("455_relaxed_newtext_cannot_take_the_change", {"a.txt": "x\ny\n"}, one("a.txt", edit("  y", "z")),
     exit=1, codes=["not_found"])
case("456_relaxed_tabs_written_in_file_style", {"a.txt": "if a {\n\tb();\n}\n"},
     one("a.txt", edit("if a {\n    b();\n}", "if a {\n    c();\n        d();\n}")),
     {"a.txt": "if a {\n\tc();\n\t\td();\n}\n"}, checks={E0 + "/match": "relaxed", E0 + "/normalizations": ["tabs"]})
case("457_relaxed_line_numbers_from_read", {"a.txt": "a\nb\nc\n"},
     one("a.txt", edit("     2\tb\n     3\tc", "     2\tB\n     3\tC")), {"a.txt": "a\nB\nC\n"},
     checks={E0 + "/match": "relaxed", E0 + "/normalizations": ["line_numbers"]})
case("458_relaxed_line_numbers_must_match_the_file", {"a.txt": "a\nb\nc\n"},
     one("a.txt", edit("7 | b\n8 | c", "x")), exit=1, codes=["not_found"])
case("459_relaxed_ambiguous_lists_every_candidate", {"a.txt": "  a\n  b\n\n    a\n    b\n"},
     one("a.txt", edit("a\nb", "c")), exit=1, codes=["ambiguous"],
     checks={E0 + "/error/candidates/0/range": rng(0, 0, 1, 3), E0 + "/error/candidates/1/range": rng(3, 0, 4, 5)})
case("460_tolerance_exact_refuses_normalized", {"a.txt": "say \u201chi\u201d\n"}, one("a.txt", edit('say "hi"', "x")),
     args=["apply", "--tolerance", "exact"], exit=1, codes=["not_found"])
case("461_tolerance_exact_counts_exact_occurrences_only", {"a.txt": "it\u2019s\nit's\n"}, one("a.txt", edit("it's", "x")),
     {"a.txt": "it\u2019s\nx\n"}, args=["apply", "--tolerance", "exact"], checks={E0 + "/match": "exact"})
case("462_crlf_kept_around_relaxed_match", {"a.txt": b"x\r\n  a  b\r\ny\r\n"}, one("a.txt", edit("a b\nyy", "c")),
     exit=1, codes=["not_found"])
case("463_crlf_relaxed_inserted_lines_take_the_ending", {"a.txt": b"x\r\n  a  b\r\ny\r\n"},
     one("a.txt", edit("a b", "c\nd")), {"a.txt": b"x\r\n  c\r\n  d\r\ny\r\n"}, checks={E0 + "/match": "relaxed"})

if __name__ == "__main__":
    emit()
