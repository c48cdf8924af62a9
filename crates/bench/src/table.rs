//! Number formats and the aligned text tables of the summaries.

/// Rows under a header, columns padded to their widest cell (`right[i]`: right-aligned).
pub(crate) fn table(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let padded: Vec<String> = cells
            .zip(&widths)
            .zip(right)
            .map(|((c, &w), &r)| if r { format!("{c:>w$}") } else { format!("{c:<w$}") })
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(&mut header.iter().copied())];
    out.extend(rows.iter().map(|r| line(&mut r.iter().map(String::as_str))));
    out.join("\n")
}

/// A rate: `12,345` from 1,000 up, `123` from 100, else one decimal.
pub(crate) fn rate(x: f64) -> String {
    if x >= 1000.0 {
        let digits = format!("{x:.0}");
        let mut out = String::with_capacity(digits.len() + digits.len() / 3);
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// CPU µs, three significant digits (at least two decimals below 1).
pub(crate) fn cpu(x: f64) -> String {
    match x {
        x if x >= 100.0 => format!("{x:.0}"),
        x if x >= 10.0 => format!("{x:.1}"),
        x if x >= 1.0 => format!("{x:.2}"),
        x => format!("{x:.3}"),
    }
}

/// A ratio with about three significant digits: `24.1x`, `1.46x`, `0.034x`.
pub(crate) fn ratio(x: f64) -> String {
    match x {
        x if !x.is_finite() => "inf".into(),
        x if x >= 100.0 => format!("{x:.0}x"),
        x if x >= 10.0 => format!("{x:.1}x"),
        x if x >= 0.1 => format!("{x:.2}x"),
        x => format!("{x:.3}x"),
    }
}

/// To three decimals for JSON; -1 for a non-finite value.
pub(crate) fn round(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1000.0).round() / 1000.0
    } else {
        -1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(
            (rate(1234567.4), rate(999.5), rate(123.4), rate(12.34)),
            ("1,234,567".into(), "1000".into(), "123".into(), "12.3".into())
        );
        assert_eq!(
            (cpu(473.2), cpu(18.64), cpu(1.234), cpu(0.2049)),
            ("473".into(), "18.6".into(), "1.23".into(), "0.205".into())
        );
        assert_eq!(
            (ratio(29.04), ratio(1.456), ratio(0.0342), ratio(f64::INFINITY)),
            ("29.0x".into(), "1.46x".into(), "0.034x".into(), "inf".into())
        );
        assert_eq!(
            table(&["a", "bb"], &[vec!["long".into(), "1".into()]], &[false, true]),
            "a     bb\nlong   1"
        );
    }
}
