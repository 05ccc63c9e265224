//! Lists and strings read from files anyone may hand over (reports, export files) refused once
//! past a count or a length, while they stream by: a file of fifty million empty strings never
//! becomes fifty million allocations, and a megabyte name never becomes a gigabyte CSV.

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

/// `#[serde(deserialize_with = "text::<_, N>")]`: a string of at most `N` bytes (names go
/// into every row of a CSV: a long one multiplies by the rows).
pub fn text<'de, D: Deserializer<'de>, const N: usize>(de: D) -> Result<String, D::Error> {
    Text::<N>::deserialize(de).map(|t| t.0)
}

/// `#[serde(deserialize_with = "texts::<_, COUNT, N>")]`: a list of at most `COUNT` strings of
/// at most `N` bytes each.
pub fn texts<'de, D, const COUNT: usize, const N: usize>(de: D) -> Result<Vec<String>, D::Error>
where
    D: Deserializer<'de>,
{
    at_most::<_, Text<N>, COUNT>(de).map(|v| v.into_iter().map(|t| t.0).collect())
}

/// A string refused past `N` bytes.
struct Text<const N: usize>(String);

impl<'de, const N: usize> Deserialize<'de> for Text<N> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Bounded<const N: usize>;
        impl<const N: usize> Visitor<'_> for Bounded<N> {
            type Value = Text<N>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "a string of at most {N} bytes")
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
                if v.len() > N {
                    return Err(E::custom(format!(
                        "a name or value longer than {N} bytes ({} bytes)",
                        v.len()
                    )));
                }
                Ok(Text(v.to_string()))
            }
        }
        de.deserialize_str(Bounded::<N>)
    }
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

    #[derive(serde::Deserialize, Debug)]
    struct Short {
        #[serde(deserialize_with = "super::text::<_, 4>")]
        name: String,
        #[serde(deserialize_with = "super::texts::<_, 2, 4>")]
        values: Vec<String>,
    }

    #[test]
    fn texts_past_their_length_are_refused() {
        let ok: Short = serde_json::from_str(r#"{"name":"abcd","values":["a","bcde"]}"#).unwrap();
        assert_eq!((ok.name.as_str(), ok.values.len()), ("abcd", 2));
        for bad in [
            r#"{"name":"abcde","values":[]}"#,
            r#"{"name":"a","values":["abcde"]}"#,
            r#"{"name":"a","values":["a","b","c"]}"#,
        ] {
            assert!(serde_json::from_str::<Short>(bad).is_err(), "{bad}");
        }
    }
}
