/**
 * The counts of a publication into an OCI registry, as `mirror oci://` and
 * `bundle import … oci://` report them: one line of text and the same counts
 * as `-json` fields (docs/json-ui.md).
 */
import type { PublishOutcome } from '../installer/oci-publish.js';
import { count } from '../ui/words.js';

/** The counts of a publication into an OCI registry (`mirror oci://`, `bundle import … oci://`): their text and their `-json` fields. */
export function ociPublishCounts(o: Omit<PublishOutcome, 'failures'>): {
  text: string;
  fields: Record<string, number>;
} {
  return {
    text: `${count(o.uploaded, 'blob')} uploaded (${o.uploadedBytes} bytes), ${o.present} already present, ${o.mounted} mounted; ${count(o.tagsPushed, 'tag')} pushed, ${o.tagsUnchanged} unchanged`,
    fields: {
      uploaded: o.uploaded,
      uploaded_bytes: o.uploadedBytes,
      present: o.present,
      mounted: o.mounted,
      tags_pushed: o.tagsPushed,
      tags_unchanged: o.tagsUnchanged,
    },
  };
}
