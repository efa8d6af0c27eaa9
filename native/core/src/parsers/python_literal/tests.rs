use super::*;

/// The result as Python's `repr` would write it, `None` for no value, `"python"` for text
/// left to Python.
fn read(text: &str) -> Option<String> {
    match python_literal(text) {
        Literal::Value(value) => {
            let mut out = String::new();
            value_repr(&value, &mut out);
            Some(out)
        }
        Literal::NoValue => None,
        Literal::Python => Some("python".into()),
    }
}

fn same(cases: &[(&str, &str)]) {
    for (text, expected) in cases {
        assert_eq!(read(text).as_deref(), Some(*expected), "{text:?}");
    }
}

fn none(cases: &[&str]) {
    for text in cases {
        assert_eq!(read(text), None, "{text:?}");
    }
}

#[test]
fn only_containers_are_read() {
    none(&["42", "'a'", "None", "(1, 2)", "-1", "\u{feff}[1]", ""]);
    same(&[
        (" \u{3000}[1]\u{85}", "[1]"),
        ("[1], 2", "[[1], 2]"),
        ("[1],", "[[1]]"),
    ]);
}

#[test]
fn strings_read_as_python_reads_them() {
    same(&[
        (
            r"['a' 'b', u'c' 'd', r'\d', R'\n']",
            r"['ab', 'cd', '\\d', '\\n']",
        ),
        (
            r"[b'a' b'b', rb'\\', BR'x', b'\777', b'\x41\N{X}']",
            r"['ab', '\\\\', 'x', '�', 'A\\N{X}']",
        ),
        (
            r"['\777', '\400', '\8', '\x41', '\u00e9', '\U0001F600', '\a\b\f\v\0']",
            "['ǿ', 'Ā', '\\\\8', 'A', 'é', '😀', '\\x07\\x08\\x0c\\x0b\\x00']",
        ),
        (
            "['''a\r\nb''', '''a\rb''', 'a\\\r\nb', r'''\r\n''']",
            r"['a\nb', 'a\nb', 'ab', '\n']",
        ),
        ("['a' # c\n 'b', 'x' \\\n 'y']", "['ab', 'xy']"),
        ("['\"', \"'\", '''it's''']", "['\"', \"'\", \"it's\"]"),
        ("[b'\\xff\\xfe']", "['\u{fffd}\u{fffd}']"),
    ]);
    none(&[
        "[f'x']",
        "['a' f'b']",
        "['a' b'b']",
        "[b'é']",
        "[ur'a']",
        "[bu'a']",
        "['\\x4']",
        "['\\u12']",
        "['\\U00110000']",
        "['a\nb']",
        "['a]",
        "[r'\\']",
        "[x'a']",
        "['a' x]",
    ]);
    same(&[("['\\N{BULLET}']", "python"), ("['\\ud800']", "python")]);
}

#[test]
fn numbers_read_as_python_reads_them() {
    same(&[
        ("[0_0, 00, 0x_ff, 0o17, 0b101, 0XFF, 1_000]", "[0, 0, 255, 15, 5, 255, 1000]"),
        ("[1., .5, 1.e5, 1e-5, 1E+2, 0777.0, 01e5, 1e400, -1e400, 1.5e-400, 2.4703282292062328e-324]",
         "[1.0, 0.5, 100000.0, 1e-05, 100.0, 777.0, 100000.0, inf, -inf, 0.0, 5e-324]"),
        ("[0777j, 2j, 1.e5j, .5j, -0j, 1.5-0j, -1-2j, (1)+(2j), 1+(2j), -(1j), 1e400j]",
         "['777j', '2j', '100000j', '0.5j', '(-0-0j)', '(1.5+0j)', '(-1-2j)', '(1+2j)', '(1+2j)', '(-0-1j)', 'infj']"),
        ("[-1e400+1e400j, 1e400-1e400j, -(1e400j)]", "['(-inf+infj)', '(inf-infj)', '(-0-infj)']"),
        ("[-(1), +(1), - 1, -0, -0.0, -9223372036854775808, 18446744073709551616]",
         "[-1, 1, -1, 0, -0.0, -9223372036854775808, 18446744073709551616]"),
    ]);
    none(&[
        "[01]",
        "[1_]",
        "[1__0]",
        "[0x]",
        "[0x_]",
        "[0x1_]",
        "[0b102]",
        "[1e]",
        "[1._0]",
        "[--1]",
        "[+-1]",
        "[-True]",
        "[+True]",
        "[1+2j+3]",
        "[2j+1]",
        "[1j+1j]",
        "[1+-2j]",
        "[1*2]",
        "[-1**2]",
        "[1 .real]",
        "[1if 1 else 2]",
        "[True+1j]",
        "[- (1,)]",
        "[-'a']",
    ]);
    let big = "[1".to_string() + &"0".repeat(40) + "]";
    same(&[(big.as_str(), "python")]);
}

#[test]
fn containers_and_names_read_as_python_reads_them() {
    same(&[
        ("[(), (1,), ((1)), [], {}, set(), set( ), ..., True, False, None]",
         "[[], [1], 1, [], {}, [], [], Ellipsis, True, False, None]"),
        ("{1: 'a', True: 'b', 1.0: 'c', 1+0j: 'd'}", "{'1': 'd'}"),
        ("{0: 1, -0.0: 2, False: 3}", "{'0': 3}"),
        ("{1: 'a', '1': 'b', 2: 'c'}", "{'1': 'b', '2': 'c'}"),
        ("{(1, 'a'): 2, b'k': 1, None: 0, ...: 3, 1j: 4, 2.5: 5, (1,): 6, (): 7}",
         "{\"(1, 'a')\": 2, \"b'k'\": 1, 'None': 0, 'Ellipsis': 3, '1j': 4, '2.5': 5, '(1,)': 6, '()': 7}"),
        ("{1, True, 1.0}", "[1]"),
        ("{'s': {'b', 'a', 3, (1, 2)}}", "{'s': ['a', 'b', 3, [1, 2]]}"),
        ("{(1,): 1, (1.0,): 2}", "{'(1,)': 2}"),
        ("{'a':1,}", "{'a': 1}"),
        ("[1,\n\t2] # trailing\n\n#x\n  \n", "[1, 2]"),
        ("[1,\x0c2]", "[1, 2]"),
        ("[1] \\\n# c", "[1]"),
    ]);
    none(&[
        "[1][0]",
        "{'a': 1}['a']",
        "[x]",
        "[set([1])]",
        "[frozenset()]",
        "{**a}",
        "[*a]",
        "[,]",
        "[1 2]",
        "{1: 2} if x else 3",
        "[1];",
        "[1] [2]",
        "{(1, [2]): 1}",
        "{1, [2]}",
        "{[1]: 2}",
        "[1]\n  2",
        "[1]\\",
        "[1\\ ]",
        "[1,\u{b}2]",
        "[\u{a0}1]",
        "[1]\u{2028}x",
        "[1]\0",
        "[. . .]",
        "[..]",
        "[Ellipsis]",
        "[lambda: 1]",
        "[(,)]",
        "{1:2 for a in b}",
    ]);
}

#[test]
fn bounds_are_the_python_parsers() {
    let at = "[".repeat(32) + &"]".repeat(32);
    let past = "[".repeat(33) + &"]".repeat(33);
    assert!(read(&at).is_some());
    assert_eq!(read(&past), None);
    assert_eq!(read(&"[".repeat(1_000_000)), None);
    // The quote scan fooled by a triple-quoted string: the tokenizer's limit of 200 holds.
    let fooled = |n: usize| "['''it's''', ".to_string() + &"[".repeat(n) + &"]".repeat(n) + "]";
    assert!(read(&fooled(199)).is_some());
    assert_eq!(read(&fooled(200)), None);
    let long = "[".to_string() + &"1,".repeat(MAX_LITERAL_CHARS / 2) + "]";
    assert_eq!(read(&long), None);
    let fits = "['".to_string() + &"é".repeat(MAX_LITERAL_CHARS - 4) + "']";
    assert!(read(&fits).is_some());
}

/// Seeded Python-repr-ish text (xorshift64*, the same on every machine): fragments that
/// reach the tokenizer's, the number rules' and `literal_eval`'s corners, glued in random
/// order. Nothing may panic, and a value is only ever made from text that opens a container.
#[test]
fn any_text_is_read_or_refused_without_panicking() {
    const PIECES: [&str; 44] = [
        "[",
        "]",
        "{",
        "}",
        "(",
        ")",
        ",",
        ":",
        " ",
        "\n",
        "\r",
        "\\",
        "#",
        "'",
        "\"",
        "'''",
        "r",
        "b",
        "u",
        "f",
        "x",
        "j",
        "e",
        "_",
        ".",
        "-",
        "+",
        "0",
        "1",
        "9",
        "0x",
        "True",
        "None",
        "set()",
        "...",
        "'a'",
        "\\N{BULLET}",
        "\\ud800",
        "\\777",
        "é",
        "\u{a0}",
        "\0",
        "18446744073709551616",
        "1e400",
    ];
    let mut state: u64 = 18 | 1;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut values = 0;
    for _ in 0..200_000 {
        let len = (next() % 14) as usize;
        let mut text = String::from(if next() % 2 == 0 { "[" } else { "{" });
        for _ in 0..len {
            text.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
        }
        if let Literal::Value(_) = python_literal(&text) {
            values += 1;
        }
    }
    assert!(values > 300, "the sweep reaches values too ({values})");
}

fn read_repr(text: &str) -> Option<String> {
    match python_repr(text) {
        Literal::Value(value) => {
            let mut out = String::new();
            value_repr(&value, &mut out);
            Some(out)
        }
        Literal::NoValue => None,
        Literal::Python => Some("python".into()),
    }
}

#[test]
fn object_reprs_read_as_the_python_parser_reads_them() {
    for (text, expected) in [
        (
            "ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='x')])",
            "{'__type__': 'ChatMessage', '_role': 'user', '_content': [{'__type__': 'TextContent', 'text': 'x'}]}",
        ),
        ("a . b.C(1, k=2, k=3)", "{'__type__': 'a.b.C', '__args__': [1], 'k': 3}"),
        ("M(__type__=1, __args__=2)", "{'__type__': 1, '__args__': 2}"),
        ("M(a=<function f.<locals>.g at 0x7f>, b=<E.A: 2>)", "{'__type__': 'M', 'a': None, 'b': 2}"),
        ("{(1, 2): 3, b'x': 1, 1.5: 2, None: 0, M(): 1}",
         "{'[1, 2]': 3, 'x': 1, '1.5': 2, 'None': 0, \"{'__type__': 'M'}\": 1}"),
        ("{[1], 2, 2}", "[[1], 2, 2]"),
        ("hello", "None"),
        ("42", "42"),
        ("set()", "{'__type__': 'set'}"),
        ("(1, 2)", "[1, 2]"),
        ("1, x", "[1, None]"),
        ("M(\n a=1,\n)", "{'__type__': 'M', 'a': 1}"),
    ] {
        assert_eq!(read_repr(text).as_deref(), Some(expected), "{text:?}");
    }
    // Everything else is Python's to read: other expressions, syntax errors, keywords.
    for text in [
        "hello world",
        "f(a=1, 2)",
        "f(*a)",
        "f(**k)",
        "x[0]",
        "-x",
        "1+2",
        "M(a=lambda: 1)",
        "M(a=1)(b=2)",
        "M(a=1).x",
        "a.b.3C(1)",
        "f.5",
        "{**a}",
        "[x for x in y]",
        "not x",
        "True.x",
        "M(True=1)",
        "é(1)",
        "<E.é: 1>",
    ] {
        assert_eq!(read_repr(text).as_deref(), Some("python"), "{text:?}");
    }
    assert_eq!(read_repr(&"[".repeat(33)), None);
    assert_eq!(read_repr(&"x".repeat(MAX_LITERAL_CHARS + 1)), None);
}

#[test]
fn any_repr_text_is_read_or_left_without_panicking() {
    const PIECES: [&str; 24] = [
        "M(",
        "a.b(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        "=",
        "k=",
        " ",
        "\n",
        "'x'",
        "1",
        "<E.A: 1>",
        "<obj at 0x1>",
        "<",
        ">",
        "None",
        "*",
        "\\",
        "é",
        "1j",
    ];
    let mut state: u64 = 1818;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut values = 0;
    for _ in 0..100_000 {
        let len = (next() % 12) as usize;
        let text: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        if let Literal::Value(_) = python_repr(&text) {
            values += 1;
        }
    }
    assert!(values > 300, "the sweep reaches values too ({values})");
}
