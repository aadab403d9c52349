//! Tests of the module above.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use proptest::prelude::*;

use super::*;

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|&(k, v)| (k.to_owned(), v.to_owned())).collect()
}

fn matched(template: &str, uri: &str) -> Option<BTreeMap<String, String>> {
    UriTemplate::parse(template).unwrap().match_uri(uri)
}

#[test]
fn parse_errors_name_the_problem_and_its_position() {
    use TemplateError as E;
    let cases: &[(&str, TemplateError)] = &[
        ("file:///{path", E::UnclosedExpression { position: 8 }),
        ("{", E::UnclosedExpression { position: 0 }),
        ("a{b{c}}", E::NestedBrace { position: 3 }),
        ("a}b", E::UnmatchedClose { position: 1 }),
        ("{a}}", E::UnmatchedClose { position: 3 }),
        ("x{}", E::EmptyName { position: 1 }),
        ("{a b}", E::InvalidName { position: 2 }),
        ("{a-b}", E::InvalidName { position: 2 }),
        ("{é}", E::InvalidName { position: 1 }),
        ("{a..b}", E::InvalidName { position: 3 }),
        ("{a.}", E::InvalidName { position: 2 }),
        ("{a%4}", E::InvalidName { position: 2 }),
        ("{a%zz}", E::InvalidName { position: 2 }),
        ("{+x}", E::UnsupportedOperator { operator: '+', position: 1 }),
        ("{#x}", E::UnsupportedOperator { operator: '#', position: 1 }),
        ("a{/x}", E::UnsupportedOperator { operator: '/', position: 2 }),
        ("{?x,y}", E::UnsupportedOperator { operator: '?', position: 1 }),
        ("{.x}", E::UnsupportedOperator { operator: '.', position: 1 }),
        ("{|x}", E::UnsupportedOperator { operator: '|', position: 1 }),
        ("{x:3}", E::UnsupportedModifier { modifier: ':', position: 2 }),
        ("{x*}", E::UnsupportedModifier { modifier: '*', position: 2 }),
        ("{x,y}", E::UnsupportedModifier { modifier: ',', position: 2 }),
        ("db://{a}{b}", E::AdjacentVariables { position: 8 }),
        ("{a}/{a}", E::DuplicateVariable { name: "a".to_owned(), position: 4 }),
    ];
    for (template, error) in cases {
        assert_eq!(UriTemplate::parse(template).as_ref(), Err(error), "{template}");
    }
}

#[test]
fn valid_names_and_literals_parse() {
    for template in ["", "no variables", "{a}", "{a.b_c.D9}", "{%41b}", "x{_}y", "é{a}ü", "{a}/{b}"] {
        let parsed = UriTemplate::parse(template).unwrap();
        assert_eq!(parsed.as_str(), template);
        assert_eq!(parsed.to_string(), template);
    }
    let t = UriTemplate::parse("{a.b}:{%41}").unwrap();
    assert_eq!(t.variables().collect::<Vec<_>>(), ["a.b", "%41"]);
}

#[test]
fn mcp_examples_expand_and_match() {
    let file = UriTemplate::parse("file:///{path}").unwrap();
    assert_eq!(file.expand(&vars(&[("path", "notes.txt")])).unwrap(), "file:///notes.txt");
    assert_eq!(file.match_uri("file:///notes.txt"), Some(vars(&[("path", "notes.txt")])));
    assert_eq!(file.match_uri("file:///a%20b"), Some(vars(&[("path", "a b")])));
    assert_eq!(file.match_uri("file:///a%2Fb"), Some(vars(&[("path", "a/b")])));

    let db = UriTemplate::parse("db://{table}/rows/{id}").unwrap();
    let uri = db.expand(&vars(&[("table", "users"), ("id", "42"), ("unused", "x")])).unwrap();
    assert_eq!(uri, "db://users/rows/42");
    assert_eq!(db.match_uri(&uri), Some(vars(&[("table", "users"), ("id", "42")])));
}

#[test]
fn expansion_encodes_everything_but_unreserved() {
    let t = UriTemplate::parse("x:{v}").unwrap();
    let cases = [
        ("AZaz09-._~", "x:AZaz09-._~"),
        ("a b/c?d#e", "x:a%20b%2Fc%3Fd%23e"),
        ("100%", "x:100%25"),
        ("é€😀", "x:%C3%A9%E2%82%AC%F0%9F%98%80"),
        ("{}", "x:%7B%7D"),
        ("", "x:"),
    ];
    for (value, uri) in cases {
        assert_eq!(t.expand(&vars(&[("v", value)])).unwrap(), uri);
    }
    assert_eq!(t.expand(&BTreeMap::new()), Err(TemplateError::MissingVariable { name: "v".to_owned() }));
}

#[test]
fn unicode_values_match_encoded_or_raw() {
    assert_eq!(matched("file:///{p}", "file:///%C3%A9t%C3%A9"), Some(vars(&[("p", "été")])));
    assert_eq!(matched("file:///{p}", "file:///%c3%a9"), Some(vars(&[("p", "é")])));
    assert_eq!(matched("file:///{p}", "file:///été"), Some(vars(&[("p", "été")])));
    assert_eq!(matched("файл:{p}/ü", "файл:%F0%9F%98%80/ü"), Some(vars(&[("p", "😀")])));
}

#[test]
fn non_matching_uris_give_none() {
    let cases = [
        ("file:///{p}", "http:///x"),
        ("file:///{p}", "file:///"),
        ("file:///{p}", "file:///a/b"),
        ("file:///{p}", "file:///%zz"),
        ("file:///{p}", "file:///%4"),
        ("file:///{p}", "file:///%C3"),
        ("file:///{p}", "file:///%FF"),
        ("file:///{p}", "file:///%ED%A0%80"),
        ("file:///{p}", "file:///%C0%80"),
        ("db://{t}/rows/{id}", "db://users/rows/"),
        ("db://{t}/rows/{id}", "db://users/row/1"),
        ("db://{t}/rows/{id}", "db://users/rows/1/extra"),
        ("a{x}a", "a"),
        ("a{x}a", "aa"),
        ("plain", "plain/"),
        ("", "x"),
    ];
    for (template, uri) in cases {
        assert_eq!(matched(template, uri), None, "{template} vs {uri}");
    }
    assert_eq!(matched("plain", "plain"), Some(BTreeMap::new()));
    assert_eq!(matched("", ""), Some(BTreeMap::new()));
}

#[test]
fn ambiguous_splits_take_the_shortest_first_variable() {
    assert_eq!(matched("{a}-{b}", "x-y-z"), Some(vars(&[("a", "x"), ("b", "y-z")])));
    assert_eq!(matched("{a}.{b}", "x..y"), Some(vars(&[("a", "x"), ("b", ".y")])));
}

#[test]
fn matching_backtracks_over_undecodable_runs() {
    // The first "3" cuts "%C3" in half, so `a` must extend to the second one.
    assert_eq!(matched("{a}3{b}", "%C3%A93x"), Some(vars(&[("a", "é"), ("b", "x")])));
    // Neither split works: "%-y" and "x-%" both hold a truncated escape.
    assert_eq!(matched("{a}-{b}", "x-%-y"), None);
    assert_eq!(matched("{a}-{b}", "x-y-%zz"), None);
    assert_eq!(matched("{a}-{b}:", "x-%41-y:"), Some(vars(&[("a", "x"), ("b", "A-y")])));
    // `c` fails from byte 5, but `b` succeeds from there once `a` has taken "z%41".
    assert_eq!(matched("{a}%{b}%{c}", "z%41%x%y"), Some(vars(&[("a", "zA"), ("b", "x"), ("c", "y")])));
    // Ending `a` at the first "%A9" leaves it with half of "é".
    assert_eq!(matched("{a}%A9{b}", "%C3%A9%A9x"), Some(vars(&[("a", "é"), ("b", "x")])));
}

#[test]
fn decoder_agrees_with_std_utf8_validation() {
    fn check(bytes: &[u8]) {
        let state = bytes.iter().try_fold(Decoder::START, |state, &b| state.decoded(b));
        let expected = match std::str::from_utf8(bytes) {
            Ok(_) => Some(true),
            Err(e) if e.error_len().is_none() => Some(false),
            Err(_) => None,
        };
        assert_eq!(state.map(Decoder::is_complete), expected, "{bytes:02X?}");
    }
    let edges = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xF0, 0xF4, 0xF5];
    for b0 in 0..=0xFF {
        for b1 in 0..=0xFF {
            check(&[b0, b1]);
        }
        for b1 in edges {
            for b2 in edges {
                check(&[b0, b1, b2]);
                for b3 in edges {
                    check(&[b0, b1, b2, b3]);
                }
            }
        }
    }
    let escaped = "%e2%82%AC".bytes().try_fold(Decoder::START, Decoder::step);
    assert_eq!(escaped.map(Decoder::is_complete), Some(true));
    assert_eq!("%4".bytes().try_fold(Decoder::START, Decoder::step).map(Decoder::is_complete), Some(false));
    assert_eq!("%4G".bytes().try_fold(Decoder::START, Decoder::step), None);
}

#[test]
fn pathological_inputs_match_in_linear_time() {
    let template = UriTemplate::parse("{a}-{b}-{c}-{d}-{e}/{f}").unwrap();
    let uri = "x-".repeat(20_000);
    assert_eq!(template.match_uri(&uri), None);
    let template = UriTemplate::parse("{a}%{b}%{c}%{d}").unwrap();
    let uri = "%".repeat(20_000);
    assert_eq!(template.match_uri(&uri), None);
}

#[test]
fn serde_uses_the_template_string_and_refuses_invalid_ones() {
    let t = UriTemplate::parse("db://{table}").unwrap();
    assert_eq!(serde_json::to_string(&t).unwrap(), r#""db://{table}""#);
    assert_eq!(serde_json::from_str::<UriTemplate>(r#""db://{table}""#).unwrap(), t);
    let err = serde_json::from_str::<UriTemplate>(r#""db://{+table}""#).unwrap_err();
    assert!(err.to_string().contains("unsupported operator `+`"), "{err}");
    assert!(serde_json::from_str::<UriTemplate>("42").is_err());
    assert_eq!("db://{table}".parse::<UriTemplate>(), Ok(t));
}

/// Every split of `uri` into the template's variables, ends in increasing order: the first
/// solution found is the leftmost-shortest one. Exponential; for small inputs only.
fn brute_force(t: &UriTemplate, uri: &str) -> Option<BTreeMap<String, String>> {
    fn go(t: &UriTemplate, uri: &str, var: usize, at: usize, out: &mut Vec<String>) -> bool {
        let Some(v) = t.variables.get(var) else { return at == uri.len() };
        for end in at + 1..=uri.len() {
            let (Some(run), Some(rest)) = (uri.get(at..end), uri.get(end..)) else { continue };
            if run.contains('/') || !rest.starts_with(&v.suffix) {
                continue;
            }
            let Some(value) = percent_decode(run) else { continue };
            out.push(value);
            if go(t, uri, var + 1, end + v.suffix.len(), out) {
                return true;
            }
            out.pop();
        }
        false
    }
    let rest = uri.strip_prefix(&t.prefix)?;
    let mut out = Vec::new();
    go(t, uri, 0, uri.len() - rest.len(), &mut out).then(|| t.variables().map(str::to_owned).zip(out).collect())
}

/// Pieces of URIs that make the search backtrack: separators, escapes cut in half, UTF-8
/// sequences split between a variable and a literal.
const TOKENS: &[&str] = &["a", "/", "-", "%", "%41", "%C3", "%A9", "é"];

/// Fewer pieces, so that UTF-8 sequences split across a literal come up often.
const UTF8_TOKENS: &[&str] = &["a", "/", "%", "%C3", "%A9"];

/// A template shape built from `alphabet` and a URI that follows it, so that the URI often
/// matches, in several ways: (prefix, literals, last literal, URI).
fn shaped(alphabet: &'static [&'static str]) -> impl Strategy<Value = (String, Vec<String>, String, String)> {
    let tokens = move |len: std::ops::Range<usize>| {
        prop::collection::vec(prop::sample::select(alphabet), len).prop_map(|t| t.concat())
    };
    let literals = prop::collection::vec(tokens(1..3), 0..3);
    (tokens(0..2), literals, tokens(0..2), prop::collection::vec(tokens(0..4), 3)).prop_map(
        |(prefix, literals, last, runs)| {
            let mut uri = prefix.clone();
            for (run, literal) in runs.iter().zip(&literals) {
                uri.push_str(run);
                uri.push_str(literal);
            }
            uri.push_str(&runs[literals.len()]);
            uri.push_str(&last);
            (prefix, literals, last, uri)
        },
    )
}

/// A literal that expansion cannot produce inside a value: it holds a character expansion
/// always encodes.
fn separating_literal() -> impl Strategy<Value = String> {
    ("[^{}]{0,3}", "[^{}A-Za-z0-9._~%-]", "[^{}]{0,3}").prop_map(|(a, sep, b)| format!("{a}{sep}{b}"))
}

/// A template from a prefix, variables `v0`, `v1`, ... and the literals after them.
fn template(prefix: &str, literals: &[String], last: &str) -> UriTemplate {
    let mut source = prefix.to_owned();
    for (i, literal) in literals.iter().enumerate() {
        source.push_str(&format!("{{v{i}}}{literal}"));
    }
    source.push_str(&format!("{{v{}}}{last}", literals.len()));
    UriTemplate::parse(&source).unwrap()
}

fn values(t: &UriTemplate, values: &[String]) -> BTreeMap<String, String> {
    t.variables().map(str::to_owned).zip(values.iter().cloned()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn match_inverts_expand_for_separated_templates(
        prefix in "[^{}]{0,4}",
        literals in prop::collection::vec(separating_literal(), 0..4),
        last in "[^{}]{0,4}",
        raw in prop::collection::vec("(?s).{1,8}", 4),
    ) {
        let t = template(&prefix, &literals, &last);
        let vars = values(&t, &raw);
        let uri = t.expand(&vars).unwrap();
        prop_assert_eq!(t.match_uri(&uri), Some(vars));
    }

    #[test]
    fn match_finds_a_split_of_any_expansion(
        prefix in "[^{}]{0,3}",
        literals in prop::collection::vec("[^{}]{1,3}", 0..4),
        last in "[^{}]{0,3}",
        raw in prop::collection::vec("(?s).{1,6}", 4),
    ) {
        let t = template(&prefix, &literals, &last);
        let uri = t.expand(&values(&t, &raw)).unwrap();
        let found = t.match_uri(&uri);
        prop_assert!(found.is_some(), "{} vs {}", t, uri);
        prop_assert_eq!(t.expand(&found.unwrap()).unwrap(), uri);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn match_agrees_with_brute_force((prefix, literals, last, uri) in shaped(TOKENS)) {
        let t = template(&prefix, &literals, &last);
        prop_assert_eq!(t.match_uri(&uri), brute_force(&t, &uri), "{} vs {}", t, uri);
    }

    #[test]
    fn match_agrees_with_brute_force_on_split_utf8((prefix, literals, last, uri) in shaped(UTF8_TOKENS)) {
        let t = template(&prefix, &literals, &last);
        prop_assert_eq!(t.match_uri(&uri), brute_force(&t, &uri), "{} vs {}", t, uri);
    }

    #[test]
    fn arbitrary_templates_and_uris_never_panic(template in "(?s).{0,16}", uri in "(?s).{0,32}") {
        if let Ok(t) = UriTemplate::parse(&template) {
            if let Some(found) = t.match_uri(&uri) {
                prop_assert!(found.keys().map(String::as_str).eq(t.variables().collect::<BTreeSet<_>>()));
                prop_assert!(found.values().all(|v| !v.is_empty()));
            }
        }
    }

    #[test]
    fn arbitrary_uris_against_fixed_templates_agree_with_brute_force(uri in "(?s)[a-z:/%0-9A-F{}é-]{0,40}") {
        for template in ["file:///{path}", "db://{table}/rows/{id}", "{a}-{b}-{c}", "{a}%{b}"] {
            let t = UriTemplate::parse(template).unwrap();
            prop_assert_eq!(t.match_uri(&uri), brute_force(&t, &uri));
        }
    }
}
