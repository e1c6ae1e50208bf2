//! [`Cursor`]: reads one frame's items, and [`Malformed`]: what is wrong
//! inside a frame whose checksum held.

/// What is wrong inside a frame (the frame's checksum held): a fixed text
/// on the hot path, a formatted one for the rare cases.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Malformed(std::borrow::Cow<'static, str>);

impl From<&'static str> for Malformed {
    fn from(s: &'static str) -> Self {
        Malformed(std::borrow::Cow::Borrowed(s))
    }
}

impl From<String> for Malformed {
    fn from(s: String) -> Self {
        Malformed(std::borrow::Cow::Owned(s))
    }
}

/// Reads the items of [`crate::wire`] (postcard's integer encodings: LEB128
/// varints, zigzag for signed, length-prefixed bytes) straight into the
/// caller's `Hit`.
pub(crate) struct Cursor<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    pub(crate) fn varint(&mut self, max_bytes: usize) -> Result<u64, Malformed> {
        let mut v: u64 = 0;
        for i in 0..max_bytes {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err("record cut short".into());
            };
            self.pos += 1;
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }

    #[inline]
    pub(crate) fn byte(&mut self) -> Result<u8, Malformed> {
        let b = *self.buf.get(self.pos).ok_or("record cut short")?;
        self.pos += 1;
        Ok(b)
    }

    #[inline]
    pub(crate) fn u64(&mut self) -> Result<u64, Malformed> {
        self.varint(10)
    }

    #[inline]
    pub(crate) fn i64(&mut self) -> Result<i64, Malformed> {
        let z = self.u64()?;
        Ok((z >> 1) as i64 ^ -((z & 1) as i64))
    }

    #[inline]
    pub(crate) fn u32(&mut self) -> Result<u32, Malformed> {
        u32::try_from(self.varint(5)?).map_err(|_| "value out of range".into())
    }

    #[inline]
    pub(crate) fn u16(&mut self) -> Result<u16, Malformed> {
        u16::try_from(self.varint(3)?).map_err(|_| "value out of range".into())
    }

    #[inline]
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let n = self.u64()? as usize;
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or("length beyond the frame")?;
        let b = &self.buf[self.pos..end];
        self.pos = end;
        Ok(b)
    }

    #[inline]
    pub(crate) fn str(&mut self) -> Result<&'a str, Malformed> {
        std::str::from_utf8(self.bytes()?).map_err(|_| "string is not UTF-8".into())
    }
}
