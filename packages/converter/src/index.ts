/**
 * @mailconv/converter: the conversion engine as a pure library (no HTTP, no database).
 * Start with {@link Converter.create}; detect uploads with {@link detectFormat}.
 */
export { Converter, type ConverterConfig, type ConvertRequest, type ConvertResult, type OutputMetadata } from './converter.js';
export { ConversionError, quote, type ConversionErrorCode, type ConversionFailure } from './errors.js';
export { DEFAULT_INPUT_LIMITS, type InputFacts, type InputLimits } from './guards/input-guard.js';
export { UnsafeOutputError, type OutputViolation, type SecurityEvent } from './guards/output-guard.js';
export { detectFormat, type Detection } from './formats/detect.js';
export { safeFilename } from './filenames.js';
export { FORMATS, formatInfo, normaliseExtension, type FormatFamily, type FormatInfo } from './formats/catalogue.js';
export { PAGE_OPTION_NAMES, PAPER_SIZES, pageOptionsRecord, type PageOptions } from './page-options.js';
export { PDF_ARCHIVE_OPTION_NAMES, PDFA_LEVELS, pdfArchiveOptionsRecord, type PdfaLevel, type PdfArchiveOptions } from './pdf-archive-options.js';
export { answeredStamps, checkRegex, MARK_POSITIONS, PDF_MARKUP_LIMITS, PDF_MARKUP_OPTION_NAMES, pdfMarkupRecord, type PdfMarkupOptions } from './pdf-markup-options.js';
export { VIDEO_FRAME_DEFAULTS, VIDEO_OPTION_NAMES, videoOptionsRecord, type VideoFrameOptions } from './video-options.js';
export { PHOTO_METADATA, PHOTO_METADATA_TARGETS, type PhotoMetadata } from './photo-metadata.js';
export { PDF_FORM_LIMITS, PDF_FORM_OPTION_NAMES, pdfFormOptionsRecord, type FormValue, type PdfFormOptions, type PdfMetadata } from './pdf-form-options.js';
export { PDF_IMAGE_LIMITS } from './engines/pdf-images.engine.js';
export type { PdfFacts } from './engines/pdf-info.engine.js';
export { MAX_WATERMARK_CHARS, OCR_LANGUAGES, PDF_COMPRESSION, PDF_ROTATIONS, PRESETS, parseOptions, parsePageRange, type ConversionOptions, type PageSpan, type PdfCompression, type Preset } from './options.js';
export { Registry, ENGINE_ORDER, INTERMEDIATES, type FormatListing, type ProvenPairs, type RegistryOptions, type Route, type RouteStep, type TargetListing } from './registry.js';
export { PROOF_FILE, provenPairs, readProof, type FailedPair, type ProofFile, type ProvenPair } from './proven-pairs.js';
export type { EngineProbe, RemoteAnswer, RemotePage } from './engines/engine.js';
export type { LibreOfficePoolOptions, PoolStats } from './engines/libreoffice-pool.js';
export { CHROMIUM_BIN, CHROMIUM_OFFLINE_FLAGS, type ChromiumPoolOptions, type ChromiumPoolStats } from './engines/chromium-pool.js';
export { allowSandboxTraversal, ownForSandbox, runSandboxed, sandboxCapabilities, shareWithSandbox, type ExecResult, type RunOptions, type SandboxCapabilities } from './exec/exec.js';
export { SIGN_OPTION_NAMES, MAX_SIGN_TEXT_CHARS, type SignOptions } from './sign-options.js';
export { CredentialError, credentialFromText, credentialToText, loadPkcs12, MAX_PKCS12_BYTES, type CertificateFacts, type SigningCredential } from './signing-credential.js';
export { openPkcs12, PKCS12_CONCURRENCY, PKCS12_HEAP_MB, PKCS12_TIMEOUT_MS, type OpenPkcs12Options } from './pkcs12-open.js';
export { PKCS12_LIMITS, scanPkcs12, type Pkcs12Limits } from './pkcs12-scan.js';
