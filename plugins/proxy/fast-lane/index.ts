// The proxy's fast lane as the rest of the proxy sees it. The lane stands on two parts of Node that
// Node does not publish, and for which it offers no public equivalent: llhttp, its HTTP/1 parser,
// reached through node:http's internal module `_http_common` (node:http's server and undici's own
// llhttp build give no parser to drive over a socket of one's own), and the stream binding
// (`process.binding('stream_wrap')`) whose write requests let a write go to a socket's handle in the
// same system call. Each is checked once at start; without the parser the lane does not run (nor
// its HTTP/2 side, which reads replicas' answers with it) and every connection takes the general
// path; without the binding the lane writes through the sockets.
// `[proxy].fast_lane = false` turns the lane off.
import { directWrites } from './direct-write.js'
import { createParser } from './llhttp.js'

export { FastLane, HELD_FOR_CLIENT, type LaneOptions } from './lane.js'
export { Http2Lane } from './http2.js'
export { createParser, type ParserFactory } from './llhttp.js'
export { UpstreamConnections } from './upstream-connections.js'

export interface LaneSupport {
  /** node:http's parser is there and behaves as the lane expects: the lane can run. */
  parser: boolean
  /** Writes can go straight to a socket's handle. */
  directWrites: boolean
}

/** What this Node offers the fast lane. */
export function laneSupport (): LaneSupport {
  return { parser: createParser !== undefined, directWrites }
}
