use std::io::{self, Write};

/// Go's `text/tabwriter` with vegeta's settings (min width 0, padding 2,
/// pad with spaces): tab-terminated cells are aligned in columns over each
/// run of consecutive lines that have a cell in that column; the text after
/// a line's last tab is not a cell and is not padded. Text is buffered and
/// laid out on [`TabWriter::flush`].
pub struct TabWriter<W: Write> {
    out: W,
    padding: usize,
    text: Vec<u8>,
    /// Each column at least this wide (barrage's own blocks under
    /// vegeta's, lined up with its columns).
    min_widths: Vec<usize>,
}

impl<W: Write> TabWriter<W> {
    /// A writer with vegeta's padding of 2.
    pub fn new(out: W) -> Self {
        TabWriter {
            out,
            padding: 2,
            text: Vec::new(),
            min_widths: Vec::new(),
        }
    }

    /// The same, its columns at least `widths` wide.
    pub fn at_least(out: W, widths: &[usize]) -> Self {
        TabWriter {
            min_widths: widths.to_vec(),
            ..TabWriter::new(out)
        }
    }

    /// Lays out everything written so far and writes it out.
    pub fn flush_table(&mut self) -> io::Result<()> {
        let text = String::from_utf8_lossy(&self.text).into_owned();
        self.text.clear();
        let ends_with_newline = text.ends_with('\n');
        let mut lines: Vec<Vec<&str>> = text.split('\n').map(|l| l.split('\t').collect()).collect();
        if ends_with_newline {
            lines.pop();
        }
        let mut out = String::with_capacity(text.len() * 2);
        let mut widths = Vec::new();
        self.format(&lines, 0, lines.len(), &mut widths, &mut out);
        if !ends_with_newline && out.ends_with('\n') {
            out.pop();
        }
        self.out.write_all(out.as_bytes())?;
        self.out.flush()
    }

    /// The recursive column-block layout of Go's `tabwriter.format`.
    fn format(
        &self,
        lines: &[Vec<&str>],
        mut line0: usize,
        line1: usize,
        widths: &mut Vec<usize>,
        out: &mut String,
    ) {
        let column = widths.len();
        let mut this = line0;
        while this < line1 {
            if column + 1 >= lines[this].len() {
                this += 1;
                continue;
            }
            // A column block starts here: print the lines before it.
            write_lines(lines, line0, this, widths, out);
            line0 = this;
            let mut width = self.min_widths.get(column).copied().unwrap_or(0);
            while this < line1 && column + 1 < lines[this].len() {
                width = width.max(lines[this][column].chars().count() + self.padding);
                this += 1;
            }
            widths.push(width);
            self.format(lines, line0, this, widths, out);
            widths.pop();
            line0 = this;
        }
        write_lines(lines, line0, line1, widths, out);
    }

    /// Consumes the writer, returning the inner one (after a flush).
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush_table()?;
        Ok(self.out)
    }
}

fn write_lines(lines: &[Vec<&str>], from: usize, to: usize, widths: &[usize], out: &mut String) {
    for line in &lines[from..to] {
        for (j, cell) in line.iter().enumerate() {
            out.push_str(cell);
            if j + 1 < line.len() {
                if let Some(w) = widths.get(j) {
                    for _ in cell.chars().count()..*w {
                        out.push(' ');
                    }
                }
            }
        }
        out.push('\n');
    }
}

impl<W: Write> Write for TabWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_table()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(text: &str) -> String {
        let mut tw = TabWriter::new(Vec::new());
        tw.write_all(text.as_bytes()).unwrap();
        String::from_utf8(tw.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn aligns_blocks_like_go() {
        assert_eq!(layout("a\tbb\tc\nccc\td\te\n"), "a    bb  c\nccc  d   e\n");
        // A line without cells ends the block.
        assert_eq!(layout("a\tb\nbreak\nlong\tc\n"), "a  b\nbreak\nlong  c\n");
        // Trailing tab: the last cell is padded, nothing follows.
        assert_eq!(layout("x\t1\t\nyy\t22\t\n"), "x   1   \nyy  22  \n");
        // µ counts as one column.
        assert_eq!(layout("µs\t1\nabc\t2\n"), "µs   1\nabc  2\n");
    }
}
