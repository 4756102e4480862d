// Time buckets over the post stream: the start of a post's hour or day (UTC), and per-bucket counts
// and mean polarity, the series both the sentiment summary and the spike detector work on.
import type { Post } from './posts.js'

export type Bucket = 'hour' | 'day'

const BUCKET_MS: Record<Bucket, number> = { hour: 3_600_000, day: 86_400_000 }

export function bucketStart (iso: string, bucket: Bucket): string {
  const ms = Date.parse(iso)
  return new Date(Math.floor(ms / BUCKET_MS[bucket]) * BUCKET_MS[bucket]).toISOString()
}

export interface BucketStats {
  bucket_start: string
  count: number
  mean_polarity: number
  positive: number
  negative: number
  neutral: number
  posts: Post[]
}

/** Posts grouped by bucket, in time order (buckets without posts are absent). */
export function bucketPosts (posts: Iterable<Post>, bucket: Bucket): BucketStats[] {
  const byStart = new Map<string, BucketStats>()
  for (const post of posts) {
    const start = bucketStart(post.posted_at, bucket)
    let stats = byStart.get(start)
    if (stats === undefined) {
      stats = { bucket_start: start, count: 0, mean_polarity: 0, positive: 0, negative: 0, neutral: 0, posts: [] }
      byStart.set(start, stats)
    }
    stats.count++
    stats.mean_polarity += post.polarity
    stats[post.label]++
    stats.posts.push(post)
  }
  const series = [...byStart.values()].sort((a, b) => a.bucket_start.localeCompare(b.bucket_start))
  for (const stats of series) stats.mean_polarity /= stats.count
  return series
}
