import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One stored Git LFS object (8.17's `lfs_objects`); its file is `<DATA_DIR>/lfs-objects/<oid path>`. */
@Entity('lfs_objects')
export class LfsObject {
  @PrimaryGeneratedColumn() id: number;
  @Column() oid: string;
  @Column({ type: 'bigint' }) size: string;
}
