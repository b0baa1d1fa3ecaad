//! The plain tables of `check` and `tools`: columns padded to their widest cell, two spaces
//! apart, no trailing blanks.

use std::io::Write;

/// Writes `rows` (the first one the header) as aligned columns.
pub(crate) fn write_table<const COLUMNS: usize>(
    rows: &[[String; COLUMNS]],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let widths: Vec<usize> = (0..COLUMNS)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
    }
    Ok(())
}
