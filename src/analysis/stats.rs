//! The statistics the findings share: relative changes, the "no change"
//! threshold, medians.

use super::SAME_SPEED;

/// `new` relative to `base` minus one (+0.25 = 25% more); `None` when either
/// is missing, not finite, or `base` is not positive.
pub fn change(new: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (new, base) {
        (Some(n), Some(b)) if b > 0.0 && n.is_finite() && b.is_finite() => Some(n / b - 1.0),
        _ => None,
    }
}

/// `a / b` when both are known and `b` is positive.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    change(a, b).map(|c| c + 1.0)
}

/// Whether a relative change counts as none ([`SAME_SPEED`]).
pub fn is_same(change: f64) -> bool {
    change.abs() <= SAME_SPEED
}

/// The median of the finite values, `None` without any.
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The distinct items, in the order they first appear.
pub fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    tally(items).into_iter().map(|(x, _)| x).collect()
}

/// Of each group of `same` items, the first with the highest `key`, in order of first appearance.
pub fn best_of<T>(
    items: impl IntoIterator<Item = T>,
    same: impl Fn(&T, &T) -> bool,
    key: impl Fn(&T) -> f64,
) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in items {
        match out.iter_mut().find(|b| same(b, &x)) {
            Some(b) if key(&x) > key(b) => *b = x,
            Some(_) => {}
            None => out.push(x),
        }
    }
    out
}

/// Each distinct item and how often it comes, in order of first appearance.
pub fn tally<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<(T, usize)> {
    let mut out: Vec<(T, usize)> = Vec::new();
    for x in items {
        match out.iter_mut().find(|(y, _)| *y == x) {
            Some((_, n)) => *n += 1,
            None => out.push((x, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_ratios_and_medians() {
        assert_eq!(
            change(Some(110.0), Some(100.0)).map(|c| (c * 1e6).round()),
            Some(100000.0)
        );
        assert_eq!(change(Some(1.0), Some(0.0)), None);
        assert_eq!(change(None, Some(1.0)), None);
        assert_eq!(ratio(Some(3.0), Some(2.0)), Some(1.5));
        assert!(is_same(0.03) && is_same(-0.02) && !is_same(0.031));
        assert_eq!(median([3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median([4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median([f64::NAN]), None);
    }
}
