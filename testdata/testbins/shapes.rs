//! A small library with its unit tests, built as a libtest harness for
//! wasm32-wasi: each test takes different paths through the same code.

/// Parses "w x h" into a rectangle's sides.
pub fn parse(s: &str) -> Option<(u32, u32)> {
    let mut it = s.split('x').map(|p| p.trim().parse::<u32>());
    match (it.next(), it.next(), it.next()) {
        (Some(Ok(w)), Some(Ok(h)), None) => Some((w, h)),
        _ => None,
    }
}

/// Counts the lattice points strictly inside the rectangle that lie on
/// its diagonals.
pub fn diagonal_points(w: u32, h: u32) -> u32 {
    let mut n = 0;
    for x in 1..w {
        for y in 1..h {
            if x * h == y * w || x * h == (h - y) * w {
                n += 1;
            }
        }
    }
    n
}

/// Sorts the words by length, then alphabetically, with an insertion sort.
pub fn sort_words(words: &mut Vec<&str>) {
    for i in 1..words.len() {
        let mut j = i;
        while j > 0 && (words[j - 1].len(), words[j - 1]) > (words[j].len(), words[j]) {
            words.swap(j - 1, j);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_good() {
        assert_eq!(parse("3x4"), Some((3, 4)));
        assert_eq!(parse(" 10 x 2 "), Some((10, 2)));
    }

    #[test]
    fn parse_bad() {
        assert_eq!(parse("3"), None);
        assert_eq!(parse("3x4x5"), None);
        assert_eq!(parse("ax4"), None);
    }

    #[test]
    fn square_diagonals() {
        assert_eq!(diagonal_points(6, 6), 9);
    }

    #[test]
    fn wide_diagonals() {
        assert_eq!(diagonal_points(12, 4), 5);
    }

    #[test]
    fn sorts_words() {
        let mut w = vec!["pear", "fig", "apple", "kiwi", "date"];
        sort_words(&mut w);
        assert_eq!(w, ["fig", "date", "kiwi", "pear", "apple"]);
    }

    #[test]
    fn sorts_nothing() {
        let mut w: Vec<&str> = vec![];
        sort_words(&mut w);
        assert!(w.is_empty());
    }

    #[test]
    #[ignore]
    fn ignored() {
        assert_eq!(diagonal_points(1000, 1000), 999);
    }
}
