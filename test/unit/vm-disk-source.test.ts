// Where a VM's root disk comes from (operator/runtimes/kubevirt.ts diskSource): the DataVolume source
// CDI imports from, for each form of the image setting and each pull method.
import { describe, expect, it } from '@jest/globals';
import { diskSource } from '../../operator/runtimes/kubevirt.js';

describe('the DataVolume source of a VM disk image', () => {
  it('pulls a registry image through CDI’s importer by default', () => {
    expect(diskSource('registry.example/agentry-runner-disk:1')).toEqual({
      registry: { url: 'docker://registry.example/agentry-runner-disk:1' },
    });
  });

  it('keeps an image already written as a docker:// URL', () => {
    expect(diskSource('docker://registry.example/disk:1')).toEqual({
      registry: { url: 'docker://registry.example/disk:1' },
    });
  });

  it('asks the node to pull the image when the pull method is node', () => {
    expect(diskSource('localhost/agentry-runner-disk:abc', 'node')).toEqual({
      registry: { url: 'docker://localhost/agentry-runner-disk:abc', pullMethod: 'node' },
    });
  });

  it('clones a PVC named pvc:<namespace>/<name>, whatever the pull method', () => {
    expect(diskSource('pvc:golden/runner-disk', 'node')).toEqual({
      pvc: { namespace: 'golden', name: 'runner-disk' },
    });
  });
});
