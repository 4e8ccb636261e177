import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('users_star_projects')
export class ProjectStar {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column({ name: 'user_id' }) userId: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
