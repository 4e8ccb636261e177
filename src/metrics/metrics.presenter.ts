import { StreamableFile } from '@nestjs/common';

/** The Prometheus text exposition format (0.0.4). */
export function presentMetrics(text: string): StreamableFile {
  return new StreamableFile(Buffer.from(text), { type: 'text/plain; version=0.0.4; charset=utf-8' });
}
