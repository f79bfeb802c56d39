/**
 * The zip format's numbers, in one place: record signatures, fixed header
 * lengths, general-purpose flag bits, compression methods, creator hosts,
 * the zip64 extra field and the classic format's limits. Names follow
 * PKWARE's APPNOTE.TXT (sections 4.3, 4.4) and Go's `archive/zip`
 * (`struct.go`), whose reader provkit's hashing matches.
 */

/** Local file header signature (`PK\x03\x04`). */
export const SIG_LOCAL = 0x04034b50;
/** Central directory file header signature (`PK\x01\x02`). */
export const SIG_CENTRAL = 0x02014b50;
/** End of central directory record signature (`PK\x05\x06`). */
export const SIG_END = 0x06054b50;
/** Zip64 end of central directory record signature (`PK\x06\x06`). */
export const SIG_END64 = 0x06064b50;
/** Zip64 end of central directory locator signature (`PK\x06\x07`). */
export const SIG_LOC64 = 0x07064b50;
/** The optional signature of a data descriptor (`PK\x07\x08`). */
export const SIG_DESCRIPTOR = 0x08074b50;

/** Fixed part of a local file header (name and extra field follow). */
export const LEN_LOCAL = 30;
/** Fixed part of a central directory header (name, extra field and comment follow). */
export const LEN_CENTRAL = 46;
/** Fixed part of the end of central directory record (the comment follows). */
export const LEN_END = 22;
/** The zip64 end of central directory locator. */
export const LEN_LOC64 = 20;
/** Fixed part of the zip64 end of central directory record. */
export const LEN_END64 = 56;

/** General-purpose flag bit 3: sizes and CRC follow the data in a data descriptor. */
export const FLAG_DATA_DESCRIPTOR = 0x8;
/** General-purpose flag bit 11: the name is UTF-8. */
export const FLAG_UTF8 = 0x800;

/** Compression method: stored. */
export const METHOD_STORE = 0;
/** Compression method: deflate. */
export const METHOD_DEFLATE = 8;

/** "Version made by" high byte: Unix. */
export const CREATOR_UNIX = 3;
/** "Version needed to extract" 2.0: deflate, directories. */
export const VERSION_20 = 20;

/** Extra-field tag of the zip64 extended information. */
export const EXTRA_ZIP64 = 0x0001;

/** The classic format's 32-bit fields: a value here means "see zip64". */
export const MAX32 = 0xffffffff;
/** The classic format's 16-bit fields (entry counts). */
export const MAX16 = 0xffff;

/** 1980-01-01 as an MS-DOS date (the earliest a zip can record). */
export const DOS_DATE_1980 = (0 << 9) | (1 << 5) | 1;
