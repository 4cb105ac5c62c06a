//! Kubeconfig errors without kubeconfig content. The file holds tokens and keys, and parser
//! errors quote it: YAML errors print the offending lines, serde errors quote values. Only the
//! first line is kept (position and kind of the problem), with quoted values cut out.

/// The first line of `message`, with every double-quoted fragment and every single-quoted one
/// longer than a character (`'{'` is kept: it names the syntax) replaced by `"…"`. Field names,
/// which serde quotes with backticks, are kept.
pub fn without_content(message: &str) -> String {
    let first = message.lines().next().unwrap_or_default();
    let mut out = String::with_capacity(first.len());
    let mut rest = first;
    while let Some(start) = rest.find(['"', '\'']) {
        let quote = rest[start..].chars().next().unwrap_or('"');
        let after = &rest[start + 1..];
        let Some(len) = after.find(quote) else {
            break;
        };
        out.push_str(&rest[..start]);
        let inner = &after[..len];
        if quote == '\'' && inner.chars().count() <= 1 {
            out.push_str(&rest[start..start + len + 2]);
        } else {
            out.push_str("\"…\"");
        }
        rest = &after[len + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use crate::controller::client::redact::without_content;

    #[test]
    fn parser_errors_keep_position_and_kind_but_lose_the_quoted_content() {
        let cases = [
            (
                "failed to parse kubeconfig YAML: error: line 5 column 9: unclosed bracket '{'\n --> <input>:5:9\n5 |   user: {token: s3cr3t",
                "failed to parse kubeconfig YAML: error: line 5 column 9: unclosed bracket '{'",
            ),
            (
                "failed to parse kubeconfig YAML: invalid type: string \"s3cr3t\", expected a sequence at line 3",
                "failed to parse kubeconfig YAML: invalid type: string \"…\", expected a sequence at line 3",
            ),
            (
                "missing field `server` at 'clusters[0].s3cr3t'",
                "missing field `server` at \"…\"",
            ),
            ("an \"unterminated quote", "an \"unterminated quote"),
            ("", ""),
        ];
        for (message, want) in cases {
            assert_eq!(without_content(message), want, "{message}");
        }
    }
}
