import { objectName } from '../crds/index.js';

/**
 * The id of an agent computer, task or webhook: its Kubernetes object name. The API names what it
 * makes with a UUID (docs/api.md); one made with kubectl or GitOps keeps its own name (`my-box`)
 * and is read, listed and used by that name, never listed yet 404.
 */
export const ResourceIdSchema = objectName;
