//! The descriptor screen's content as data: one instance's `inspect` lines, or the decoded
//! fields of two instances side by side. Built from inspections already made on a worker, so
//! drawing reads no file; scrolling uses the same content, so `G` knows where the last line is.

use rr_format::inspect::{Field, Inspection};

/// One field of two instances: `None` on a side that does not have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRow {
    pub name: String,
    pub left: Option<String>,
    pub right: Option<String>,
}

impl FieldRow {
    pub fn changed(&self) -> bool {
        self.left != self.right
    }
}

/// The fields of both sides, matched by name, in the left side's order; a field only the right
/// side has goes after the field it follows there (an extra argument after the last argument).
pub fn field_rows(left: &[Field], right: &[Field]) -> Vec<FieldRow> {
    let mut rows: Vec<FieldRow> = left
        .iter()
        .map(|f| FieldRow {
            name: f.name.clone(),
            left: Some(f.value.clone()),
            right: None,
        })
        .collect();
    let mut after: Option<usize> = None;
    for f in right {
        let at = match rows
            .iter()
            .position(|r| r.name == f.name && r.right.is_none())
        {
            Some(i) => i,
            None => {
                let i = after.map_or(0, |a| a + 1);
                rows.insert(
                    i,
                    FieldRow {
                        name: f.name.clone(),
                        left: None,
                        right: None,
                    },
                );
                i
            }
        };
        rows[at].right = Some(f.value.clone());
        after = Some(at);
    }
    rows
}

/// Field rows of two inspections.
pub fn compare(left: &Inspection, right: &Inspection) -> Vec<FieldRow> {
    field_rows(&left.fields(), &right.fields())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> Vec<Field> {
        pairs
            .iter()
            .map(|(n, v)| Field {
                name: n.to_string(),
                value: v.to_string(),
            })
            .collect()
    }

    #[test]
    fn fields_match_by_name_and_extras_keep_their_place() {
        let a = fields(&[("grid", "8×1×1"), ("arg 0", "→ seg 0"), ("global g", "00")]);
        let b = fields(&[
            ("grid", "16×1×1"),
            ("arg 0", "→ seg 0"),
            ("arg 1", "= 4 (0x4)"),
            ("global g", "01"),
        ]);
        let rows = field_rows(&a, &b);
        let names: Vec<_> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["grid", "arg 0", "arg 1", "global g"]);
        let changed: Vec<_> = rows.iter().map(FieldRow::changed).collect();
        assert_eq!(changed, [true, false, true, true]);
        assert_eq!(rows[2].left, None);
        let only_left = field_rows(&b, &a);
        assert_eq!(only_left[2].right, None);
    }
}
