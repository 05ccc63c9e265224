//! Lists read from files anyone may hand over (reports, export files) refused once past a
//! count, while they stream by: a file of fifty million empty strings never becomes fifty
//! million allocations.

use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};

/// `#[serde(deserialize_with = "at_most::<_, _, N>")]`: a list of at most `N` items.
pub fn at_most<'de, D, T, const N: usize>(de: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Bounded<T, const N: usize>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for Bounded<T, N> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a list of at most {N} items")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(t) = seq.next_element::<T>()? {
                if out.len() == N {
                    return Err(A::Error::custom(format!("a list of more than {N} items")));
                }
                out.push(t);
            }
            Ok(out)
        }
    }
    de.deserialize_seq(Bounded::<T, N>(PhantomData))
}

#[cfg(test)]
mod tests {
    #[derive(serde::Deserialize)]
    struct Three {
        #[serde(deserialize_with = "super::at_most::<_, _, 3>")]
        v: Vec<String>,
    }

    #[test]
    fn past_the_count_is_refused() {
        assert_eq!(
            serde_json::from_str::<Three>(r#"{"v":["a","b","c"]}"#)
                .unwrap()
                .v
                .len(),
            3
        );
        let e = serde_json::from_str::<Three>(r#"{"v":["a","b","c","d"]}"#)
            .err()
            .unwrap();
        assert!(e.to_string().contains("more than 3"), "{e}");
    }
}
