//! Medians and spreads of repeated measurements.

/// Repeated measurements of one quantity.
#[derive(Debug, Clone, Default)]
pub struct Samples(Vec<f64>);

impl Samples {
    /// Adds a measurement.
    pub fn push(&mut self, value: f64) {
        self.0.push(value);
    }

    /// Whether nothing was measured.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn sorted(&self) -> Vec<f64> {
        let mut values = self.0.clone();
        values.sort_by(f64::total_cmp);
        values
    }

    /// The median (mean of the middle two for an even count).
    pub fn median(&self) -> Option<f64> {
        let values = self.sorted();
        let n = values.len();
        match n {
            0 => None,
            _ if n % 2 == 1 => Some(values[n / 2]),
            _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
        }
    }

    /// The value below which `p` percent of the measurements lie (nearest rank).
    pub fn percentile(&self, p: f64) -> Option<f64> {
        let values = self.sorted();
        let rank = (p / 100.0 * values.len() as f64).ceil() as usize;
        values.get(rank.clamp(1, values.len().max(1)) - 1).copied()
    }

    /// The smallest and largest measurement.
    pub fn range(&self) -> Option<(f64, f64)> {
        let values = self.sorted();
        Some((*values.first()?, *values.last()?))
    }
}

/// `value` rounded to a whole number with thousands separated by commas (`1,273,254`), as the
/// tables print counts and rates; a negative value prints as 0.
pub fn grouped(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_range() {
        let mut s = Samples::default();
        assert_eq!(s.median(), None);
        for v in [5.0, 1.0, 3.0] {
            s.push(v);
        }
        assert_eq!(s.median(), Some(3.0));
        s.push(4.0);
        assert_eq!(s.median(), Some(3.5));
        assert_eq!(s.range(), Some((1.0, 5.0)));
        assert_eq!(s.percentile(50.0), Some(3.0));
        assert_eq!(s.percentile(95.0), Some(5.0));
        assert_eq!(Samples::default().percentile(95.0), None);
    }
}
