import type { DatasetSource } from '../../platform/lake-config/dataset-source.js';
import { fileReader } from './file.js';
import { httpsReader } from './https.js';
import { s3Reader } from './s3.js';
import type { DatasetReader, SourceContext } from './types.js';

export type { DatasetReader, ObjectVersion, SourceContext, SourceObject } from './types.js';
export { SourceError, bareEtag, isDataFile } from './types.js';

export function readerFor(source: DatasetSource, context: SourceContext): DatasetReader {
  switch (source.connector) {
    case 's3':
      return s3Reader(source, context.outbound);
    case 'https':
      return httpsReader(source, context.outbound);
    case 'file':
      return fileReader(source, context.fileRoots);
  }
}
