//! One line for a TOML file that does not parse: the line it failed on and why.

/// `line N: message` for a parse error of `text`.
pub(crate) fn describe(text: &str, e: &toml::de::Error) -> String {
    let line = e
        .span()
        .map(|s| text[..s.start.min(text.len())].lines().count().max(1))
        .unwrap_or(0);
    format!("line {line}: {}", e.message())
}
