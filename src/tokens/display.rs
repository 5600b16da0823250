//! The compact form a UI prints for a count: `950`, `77k`, `~77k`, `1.2M`.

use super::Count;

/// Formats `count` compactly: below 1,000 the number itself, below 10k one decimal (`1.5k`),
/// below 1M whole thousands (`77k`), then millions with one decimal (`1.2M`). Estimates get a
/// leading `~`. A trailing `.0` is dropped.
pub fn format_count(count: Count) -> String {
    let prefix = if count.exact { "" } else { "~" };
    let n = u64::from(count.tokens);
    let body = if n < 1_000 {
        n.to_string()
    } else if n < 10_000 {
        one_decimal(n, 1_000, "k")
    } else if n < 999_500 {
        format!("{}k", (n + 500) / 1_000)
    } else {
        one_decimal(n, 1_000_000, "M")
    };
    format!("{prefix}{body}")
}

/// `n / unit` rounded to one decimal, without a trailing `.0`.
fn one_decimal(n: u64, unit: u64, suffix: &str) -> String {
    let tenths = (n * 10 + unit / 2) / unit;
    if tenths % 10 == 0 { format!("{}{suffix}", tenths / 10) } else { format!("{}.{}{suffix}", tenths / 10, tenths % 10) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_the_contract_examples() {
        assert_eq!(format_count(Count::exact(950)), "950");
        assert_eq!(format_count(Count::exact(77_000)), "77k");
        assert_eq!(format_count(Count::estimate(77_000)), "~77k");
        assert_eq!(format_count(Count::exact(1_200_000)), "1.2M");
    }

    #[test]
    fn rounds_at_unit_edges() {
        assert_eq!(format_count(Count::exact(0)), "0");
        assert_eq!(format_count(Count::exact(999)), "999");
        assert_eq!(format_count(Count::exact(1_000)), "1k");
        assert_eq!(format_count(Count::exact(1_050)), "1.1k");
        assert_eq!(format_count(Count::exact(9_949)), "9.9k");
        assert_eq!(format_count(Count::exact(9_999)), "10k");
        assert_eq!(format_count(Count::exact(999_499)), "999k");
        assert_eq!(format_count(Count::exact(999_500)), "1M");
        assert_eq!(format_count(Count::exact(u32::MAX)), "4295M");
    }
}
