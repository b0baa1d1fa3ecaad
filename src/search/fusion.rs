//! The word score and the meaning score as one rank. BM25F's scores, scaled so the best match
//! of the query counts 1, are summed with the cosine of the query's embedding and each tool's,
//! each weighted (`WORDS`, `MEANING`). A tool no word of the query matches can still come first
//! by meaning, when its cosine reaches `CLOSE_ENOUGH`: below that, a query with no matching
//! word finds nothing, as with words alone. The weights were tuned on the tuning part of
//! benches/search's public queries (docs/search.md).

use super::{
    Entry,
    meaning::{self, cosine, normalise},
};

const WORDS: f32 = 1.0;
const MEANING: f32 = 3.0;
/// No query of the tuning set lacks a matching word, so this is set by what noise scores:
/// a query of nonsense words ("xyzzy plugh") comes to 0.32 on the example's tools, a wrong
/// tool for a real request up to 0.35.
const CLOSE_ENOUGH: f32 = 0.4;

/// The texts of an entry its embedding is made of: its names, title and description, and its
/// parameters.
const MEANING_FIELDS: usize = 3;

/// Every entry's embedding, one after the other; zeros where no word of it is known.
pub(super) fn embed_entries(entries: &[Entry]) -> Vec<f32> {
    let model = meaning::model();
    let dims = model.dims();
    let mut vectors = vec![0.0; entries.len() * dims];
    for (entry, vector) in entries.iter().zip(vectors.chunks_exact_mut(dims)) {
        for (_, text) in entry.fields.iter().take(MEANING_FIELDS) {
            model.add(text, vector);
        }
        normalise(vector);
    }
    vectors
}

/// The combined score of each entry (0: not a match), from its BM25F `scores` and the
/// embeddings `vectors`.
pub(super) fn fuse(mut scores: Vec<f32>, vectors: &[f32], query: &str) -> Vec<f32> {
    let model = meaning::model();
    let Some(wanted) = model.embed(query) else {
        return scores;
    };
    let best = scores.iter().copied().fold(0.0_f32, f32::max);
    let scale = match best > 0.0 {
        true => WORDS / best,
        false => 0.0,
    };
    for (score, vector) in scores.iter_mut().zip(vectors.chunks_exact(model.dims())) {
        let similar = cosine(&wanted, vector);
        if *score > 0.0 || similar >= CLOSE_ENOUGH {
            *score = *score * scale + MEANING * similar.max(0.0) + f32::EPSILON;
        }
    }
    scores
}
