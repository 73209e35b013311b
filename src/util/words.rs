//! Counts in words, the same in the terminal and the report: "1 run", "3 runs".

/// "1 run", "3 runs"; nouns ending in y, s, x or ch take their usual plural.
pub fn plural(n: usize, one: &str) -> String {
    let many = match one
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o']))
    {
        _ if n == 1 => one.to_string(),
        Some(stem) => format!("{stem}ies"),
        None if one.ends_with(['s', 'x']) || one.ends_with("ch") => format!("{one}es"),
        None => format!("{one}s"),
    };
    format!("{n} {many}")
}

/// The verb agreeing with a count: `verb(1, "is", "are")`.
pub fn verb(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_and_verbs_agree_with_counts() {
        assert_eq!(plural(1, "run"), "1 run");
        assert_eq!(plural(3, "directory"), "3 directories");
        assert_eq!(plural(2, "day"), "2 days");
        assert_eq!(plural(2, "pass"), "2 passes");
        assert_eq!(verb(2, "is", "are"), "are");
    }
}
