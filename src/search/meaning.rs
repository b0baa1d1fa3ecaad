//! The meaning score: a text's embedding by the static model in `models/search/` (built into
//! the binary; where it comes from: `models/search/model.json`), which search compares with
//! each tool's. The model is all-MiniLM-L6-v2 distilled by model2vec: a vector per token of
//! its vocabulary, so a text's embedding is the mean of its tokens' vectors, normalised. That
//! takes microseconds and no transformer, network or download.

use std::sync::LazyLock;

use super::{tokens, wordpiece::Vocabulary};

const VOCABULARY: &str = include_str!("../../models/search/vocab.txt");
/// A row of int8 per token, in the vocabulary's order. One scale for the whole table: only
/// directions are compared, so it cancels out.
const VECTORS: &[u8] = include_bytes!("../../models/search/vectors.i8");

/// The model, read from the binary at the first search that uses it.
pub(super) struct Model {
    vocabulary: Vocabulary,
    dims: usize,
}

static MODEL: LazyLock<Model> = LazyLock::new(|| {
    let vocabulary = Vocabulary::new(VOCABULARY);
    let dims = VECTORS.len() / vocabulary.len().max(1);
    Model { vocabulary, dims }
});

/// The model built into this binary.
pub(super) fn model() -> &'static Model {
    &MODEL
}

impl Model {
    /// The length of every embedding.
    pub(super) fn dims(&self) -> usize {
        self.dims
    }

    /// Adds the vectors of every token of `text` to `sum`; the number of tokens added.
    pub(super) fn add(&self, text: &str, sum: &mut [f32]) -> usize {
        let mut count = 0;
        tokens::words(text, |word| {
            if skip(word) {
                return;
            }
            self.vocabulary.pieces(word, |id| {
                let at = id as usize * self.dims;
                let row = &VECTORS[at..at + self.dims];
                for (total, &value) in sum.iter_mut().zip(row) {
                    *total += f32::from(value as i8);
                }
                count += 1;
            });
        });
        count
    }

    /// The embedding of `text`: unit length, or `None` when no word of it is known.
    pub(super) fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let mut sum = vec![0.0; self.dims];
        self.add(text, &mut sum);
        normalise(&mut sum).then_some(sum)
    }
}

/// Stop words only blur a text's meaning: leaving them out took the model alone from hit@1
/// 0.12 to 0.34 on the tau2 tuning queries, which are sentences people say.
fn skip(word: &str) -> bool {
    tokens::is_stop_word(word)
}

/// Scales `vector` to unit length; false when it is zero.
pub(super) fn normalise(vector: &mut [f32]) -> bool {
    let norm = vector.iter().map(|value| value * value).sum::<f32>().sqrt();
    if norm == 0.0 {
        return false;
    }
    vector.iter_mut().for_each(|value| *value /= norm);
    true
}

/// The cosine of two unit vectors. Summed in eight lanes: one running sum is a chain the
/// compiler may not reorder into SIMD, and a search takes a cosine per tool (5,000 in the
/// benchmark).
pub(super) fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0_f32; 8];
    let (whole_a, whole_b) = (a.chunks_exact(8), b.chunks_exact(8));
    let rest: f32 = whole_a
        .remainder()
        .iter()
        .zip(whole_b.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in whole_a.zip(whole_b) {
        for lane in 0..8 {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    lanes.iter().sum::<f32>() + rest
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    fn record() -> serde_json::Value {
        serde_json::from_str(include_str!("../../models/search/model.json")).expect("model.json")
    }

    #[test]
    fn the_model_is_the_one_its_record_describes_and_fits_the_budget() {
        let record = record();
        for (name, bytes) in [
            ("vocab.txt", VOCABULARY.as_bytes()),
            ("vectors.i8", VECTORS),
        ] {
            let digest: String = Sha256::digest(bytes)
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect();
            assert_eq!(
                record["files"][name], digest,
                "models/search/{name} differs from model.json: rerun scripts/build-search-model.sh"
            );
        }
        assert_eq!(record["tokens"], model().vocabulary.len());
        assert_eq!(record["dims"], model().dims());
        assert_eq!(VECTORS.len(), model().vocabulary.len() * model().dims());
        assert!(
            VECTORS.len() + VOCABULARY.len() <= 8_000_000,
            "at most 8 MB in the binary"
        );
    }

    #[test]
    fn words_split_into_the_pieces_the_models_own_tokenizer_gives() {
        let record = record();
        let expected = record["wordpiece_check"].as_object().expect("words");
        assert!(expected.len() >= 20);
        for (word, ids) in expected {
            let mut pieces = Vec::new();
            model().vocabulary.pieces(word, |id| pieces.push(id));
            assert_eq!(serde_json::json!(pieces), *ids, "{word}");
        }
    }

    #[test]
    fn a_text_means_what_a_tool_with_other_words_does() {
        let wanted = model().embed("put on some tunes").expect("known words");
        let music = model().embed("play_song Start music playback on the speaker");
        let invoice = model().embed("send_invoice Bill a customer for an order");
        let (music, invoice) = (music.expect("music"), invoice.expect("invoice"));
        assert!(cosine(&wanted, &music) > cosine(&wanted, &invoice) + 0.1);
        assert_eq!(model().embed("the of and"), None, "stop words only");
        assert_eq!(
            model().embed("Café"),
            model().embed("cafe"),
            "accents stripped"
        );
    }
}
