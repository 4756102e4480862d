// Entry point of the Berth codec module: raw-pointer exports over the shared scratch area.
export { scratch } from "./scratch"
export { crc32 } from "./crc32"
export { parseFrames } from "./frame"
export { rleEncode, rleDecode } from "./rle"
export { ccmSeal, ccmOpen } from "./ccm"
