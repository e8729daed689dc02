import type { DatasetSource } from '../../platform/lake-config/dataset-source.js';
import { fileReader } from './file.js';
import { httpsReader } from './https.js';
import { s3Reader } from './s3.js';
import type { DatasetReader } from './types.js';

export type { DatasetReader, SourceObject } from './types.js';
export { SourceError } from './types.js';

export function readerFor(source: DatasetSource): DatasetReader {
  switch (source.connector) {
    case 's3':
      return s3Reader(source);
    case 'https':
      return httpsReader(source);
    case 'file':
      return fileReader(source);
  }
}
